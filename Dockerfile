# mixfx in a container: the image the README's Kubernetes recipe runs.
#
#   podman build -t mixfx .        (or docker build; --build-arg SWIFT_IMAGE=... for another toolchain)
#   podman run --rm -v "$PWD:/data" -w /data mixfx render Demo/*.flac --preset demo -o band.wav
#
# Two stages: the build, in the Swift image (Debian 12 with the toolchain, as CI's machine), runs
# `make install` into a staging folder; the runtime image is Debian 12 slim with only the shared
# libraries mixfx needs (libsndfile, ALSA's library; libstdc++ and libc are in the base). The
# executable carries the Swift runtime inside (make install builds it with
# --static-swift-stdlib), so no toolchain is copied. The entry point is mixfx; a Kubernetes
# `command: ["mixfx", ...]` finds it on the PATH too.
ARG SWIFT_IMAGE=docker.io/library/swift:6.3-bookworm
ARG RUNTIME_IMAGE=docker.io/library/debian:bookworm-slim

FROM ${SWIFT_IMAGE} AS build
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends make libsndfile1-dev libasound2-dev pkg-config \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# portable (any x86-64), release, the runtime inside; the man page and completions come along
RUN make install PREFIX=/usr/local DESTDIR=/stage

FROM ${RUNTIME_IMAGE}
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libsndfile1 libasound2 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /stage/usr/local/bin/mixfx /usr/local/bin/mixfx
# fails the build if the executable needs a library the image lacks (the Swift runtime above all)
RUN mixfx --version
WORKDIR /data
ENTRYPOINT ["mixfx"]
CMD ["--help"]
