import Foundation
import MixFX

/// The bash and zsh completions (`mixfx --completions bash|zsh`, hidden; `make install` writes
/// them), made from `CommandTable`: the commands, each command's flags, the files its operands
/// and file flags take (`-o`, `--report`, `--summary`), the values of flags with choices
/// (`--dither auto|tpdf|none`, `--type wav|flac|...`) and the presets `mixfx presets` lists.
enum ShellCompletion {
    enum Shell: String, CaseIterable { case bash, zsh }

    static func script(_ shell: Shell) -> String {
        switch shell {
        case .bash: bash()
        case .zsh: zsh()
        }
    }

    // MARK: bash

    static func bash() -> String {
        let commands = CommandTable.commands
        var s = """
        # bash completion for mixfx                                     -*- shell-script -*-
        # Made by `mixfx --completions bash` (mixfx \(MixFXCommand.version)) from the flag tables its usage lines
        # are made from; installed as share/bash-completion/completions/mixfx.

        # the words of $1 that start with the word being completed
        _mixfx_words() { COMPREPLY+=($(compgen -W "$1" -- "$cur")); }
        # file names (spaces kept)
        _mixfx_files() {
            local IFS=$'\\n'
            compopt -o filenames 2>/dev/null
            COMPREPLY+=($(compgen -f -- "$cur"))
        }
        # the presets `mixfx presets` lists (its first column)
        _mixfx_presets() {
            local name rest names=""
            while read -r name rest; do names+="$name "; done < <("${COMP_WORDS[0]}" presets 2>/dev/null)
            _mixfx_words "$names"
        }

        _mixfx() {
            local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd="" i
            COMPREPLY=()
            # --flag=value: bash splits it at the =
            if [[ $cur == = ]]; then cur=""
            elif [[ $prev == = && $COMP_CWORD -ge 2 ]]; then prev=${COMP_WORDS[COMP_CWORD-2]}
            fi
            for ((i = 1; i < COMP_CWORD; i++)); do
                case ${COMP_WORDS[i]} in -*) ;; *) cmd=${COMP_WORDS[i]}; break ;; esac
            done
            case $cmd in
            "")
                if [[ $cur == -* ]]; then _mixfx_words "\(CommandTable.toolFlags.joined(separator: " "))"
                else _mixfx_words "\((commands.map(\.name) + ["help"]).joined(separator: " "))"; fi
                ;;
            help)
                [[ $prev == help ]] && _mixfx_words "\(commands.map(\.name).joined(separator: " "))"
                ;;

        """
        for command in commands {
            s += "    \(command.name))\n"
            var cases: [(names: [String], body: String)] = []
            var free: [String] = []
            var optional: [String] = []
            for flag in command.flags {
                let value = CommandTable.value(of: flag)
                let words: String
                switch value {
                case .none: continue
                case .free:
                    if flag.valueIsOptional { continue }
                    free += flag.names
                    continue
                case .choices(let choices): words = "_mixfx_words \"\(choices.joined(separator: " "))\""
                case .file: words = "_mixfx_files"
                case .preset: words = "_mixfx_presets; _mixfx_files"
                }
                if flag.valueIsOptional {
                    // `--formant [on|off]`: its values, and whatever else may come next
                    optional.append("\(flag.names.joined(separator: "|"))) \(words) ;;")
                } else {
                    cases.append((flag.names, words + "; return"))
                }
            }
            if !cases.isEmpty || !free.isEmpty || !optional.isEmpty {
                s += "        case $prev in\n"
                for c in cases { s += "        \(c.names.joined(separator: "|"))) \(c.body) ;;\n" }
                if !free.isEmpty { s += "        \(free.joined(separator: "|"))) return ;;   # a number, a time, ...\n" }
                for o in optional { s += "        \(o)\n" }
                s += "        esac\n"
            }
            let flagWords = (command.flags.flatMap(\.names) + ["--version"]).joined(separator: " ")
            switch command.operands {
            case .files:
                s += "        if [[ $cur == -* ]]; then _mixfx_words \"\(flagWords)\"; else _mixfx_files; fi\n"
            case .none:
                s += "        _mixfx_words \"\(flagWords)\"\n"
            case .presetShow:
                s += """
                        if [[ $cur == -* ]]; then _mixfx_words "\(flagWords)"
                        elif [[ $prev == show ]]; then _mixfx_presets; _mixfx_files
                        elif [[ $prev == \(command.name) ]]; then _mixfx_words show; fi

                """
            }
            s += "        ;;\n"
        }
        s += """
            esac
        }
        complete -F _mixfx mixfx

        """
        return s
    }

    // MARK: zsh

    /// `text` inside single quotes.
    private static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// `text` as an `_arguments` description or message (no `]`, `:` escaped).
    private static func zshText(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: ":", with: "\\:").replacingOccurrences(of: "[", with: "(").replacingOccurrences(of: "]", with: ")")
    }

    static func zsh() -> String {
        let commands = CommandTable.commands
        var s = """
        #compdef mixfx
        # zsh completion for mixfx. Made by `mixfx --completions zsh` (mixfx \(MixFXCommand.version)) from the
        # flag tables its usage lines are made from; installed as share/zsh/site-functions/_mixfx.

        # the presets `mixfx presets` lists (its first column), and files
        _mixfx_presets() {
          local -a names
          names=(${${(f)"$(_call_program presets ${(q)words[1]} presets 2>/dev/null)"}%% *})
          _alternative 'presets:preset:compadd -a names' 'files:preset file:_files'
        }

        _mixfx() {
          local -a commands
          commands=(

        """
        for command in commands {
            s += "    " + quoted(command.name + ":" + CommandTable.summary(of: command.name).replacingOccurrences(of: ":", with: "\\:")) + "\n"
        }
        s += """
          )
          if (( CURRENT == 2 )); then
            if [[ $PREFIX == -* ]]; then
              compadd -- \(CommandTable.toolFlags.joined(separator: " "))
            else
              _describe -t commands 'mixfx command' commands
              compadd help
            fi
            return
          fi
          local cmd=$words[2]
          shift words
          (( CURRENT-- ))
          case $cmd in
          help)
            (( CURRENT == 2 )) && _describe -t commands 'mixfx command' commands
            ;;

        """
        for command in commands {
            var specs: [String] = []
            for flag in command.flags + [FlagSyntax(names: ["--version"])] {
                let placeholder = flag.value.map(zshText) ?? ""
                let action: String? = switch CommandTable.value(of: flag) {
                case .none: nil
                case .choices(let choices): "(" + choices.joined(separator: " ") + ")"
                case .file: "_files"
                case .preset: "_mixfx_presets"
                case .free: " "
                }
                for name in flag.names {
                    var spec = "*" + name + "[" + placeholder + "]"
                    if let action { spec += (flag.valueIsOptional ? "::" : ":") + placeholder + ":" + action }
                    specs.append(quoted(spec))
                }
            }
            switch command.operands {
            case .files: specs.append(quoted("*:file:_files"))
            case .none: break
            case .presetShow: specs += [quoted("1:subcommand:(show)"), quoted("2:preset:_mixfx_presets")]
            }
            s += "  \(command.name))\n    _arguments -S \\\n      " + specs.joined(separator: " \\\n      ") + "\n    ;;\n"
        }
        s += """
          esac
        }

        _mixfx "$@"

        """
        return s
    }
}
