# mixfx: the two commands of the README.
#   make run    install what is missing, build in release, render the demo session to demo-mix.wav
#   make test   install what is missing (with the test oracles) and run the whole suite
.PHONY: run test build bench clean

run:
	scripts/install-deps.sh
	swift build -c release --product mixfx
	.build/release/mixfx render Demo/*.flac --preset demo -o demo-mix.wav --force

test:
	scripts/install-deps.sh test
	scripts/test.sh

build:
	swift build -c release

bench:
	scripts/install-deps.sh test
	Benchmarks/run.sh

clean:
	rm -rf .build demo-mix.wav
