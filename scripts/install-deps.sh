#!/usr/bin/env bash
# Installs the Debian packages Somni builds, runs and tests with. Idempotent; needs root (or sudo).
set -euo pipefail
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
PACKAGES=(
  pkg-config
  libavformat-dev libavcodec-dev libswresample-dev libavutil-dev   # decoding/encoding (FFmpeg libraries)
  libsqlite3-dev                                                    # the night store
  libpulse-dev libasound2-dev                                       # live capture (PulseAudio/PipeWire, ALSA)
  pulseaudio pulseaudio-utils libasound2-plugins                    # capture tests: a private sound server (+ ALSA's pulse plugin)
  chromium                                                          # the report's browser tests (headless)
  zlib1g-dev                                                        # decoding the browser's screenshots in tests
  tzdata                                                            # time zones: a night's clock across a daylight-saving change
  strace                                                            # tests: a night's files reach the disk before it counts as saved
)
missing=()
for p in "${PACKAGES[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
