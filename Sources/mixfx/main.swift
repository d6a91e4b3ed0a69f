import MixFXCLI

MixFXCommand.main()
