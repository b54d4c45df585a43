#!/usr/bin/env bash
# Starts a private PulseAudio server for the capture tests (somni record through a real audio
# stack), on a fixed socket the tests look for: unix:/tmp/somni-test-pulse/native.
# Works as root on a headless CI machine: no D-Bus, no sound card, no cookie (anonymous auth).
# The tests load their own virtual sources (module-pipe-source) into it. It starts with no
# sink or source at all: when a test unplugs its source there is nothing for the server to move
# the recording stream to, so the recorder sees the device vanish. Idempotent.
#   scripts/start-test-audio.sh         start (or find running) and print the server address
#   scripts/start-test-audio.sh --stop  stop it
set -euo pipefail
DIR=/tmp/somni-test-pulse
SOCKET="$DIR/native"
export PULSE_SERVER="unix:$SOCKET"

if [ "${1:-}" = "--stop" ]; then
  PIDFILE="$DIR/runtime/pulse/pid"
  if [ -f "$PIDFILE" ]; then kill "$(cat "$PIDFILE")" 2>/dev/null || true; fi
  exit 0
fi

command -v pulseaudio >/dev/null || { echo "start-test-audio: pulseaudio is not installed (scripts/install-deps.sh)" >&2; exit 1; }
if pactl info >/dev/null 2>&1; then echo "$PULSE_SERVER"; exit 0; fi

mkdir -p "$DIR/runtime"
chmod 700 "$DIR/runtime"
# -n: no default.pa (no hardware modules); --exit-idle-time=-1: stay up between tests;
# --disallow-exit: a test's 'pactl exit' cannot stop it; module loading stays allowed.
XDG_RUNTIME_DIR="$DIR/runtime" HOME="$DIR" pulseaudio --daemonize=yes --system=false -n \
  --exit-idle-time=-1 --disallow-exit --use-pid-file=yes \
  --log-target="file:$DIR/pulseaudio.log" \
  --load="module-native-protocol-unix socket=$SOCKET auth-anonymous=1"
for _ in $(seq 1 50); do
  if pactl info >/dev/null 2>&1; then
    echo "$PULSE_SERVER"
    exit 0
  fi
  sleep 0.1
done
echo "start-test-audio: PulseAudio did not come up; see $DIR/pulseaudio.log" >&2
exit 1
