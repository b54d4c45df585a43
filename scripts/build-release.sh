#!/usr/bin/env bash
# swift build -c release, compiled for this machine's CPU where that is worth it, then any
# further `swift build` arguments (--product SomniBench, --show-bin-path, …).
#
# Swift targets baseline x86-64 (SSE2, no FMA) unless told otherwise, which leaves the
# classifier's SIMD8 loops half as wide as an AVX2 machine can run them (0.13 → 0.09 ms a
# window here). On an x86-64 CPU with the Haswell feature set (AVX2, FMA, BMI1/2, F16C, MOVBE,
# LZCNT: every x86-64 PC and server since about 2015) this builds for it. The flags are passed
# on the command line rather than written into Package.swift, where SwiftPM would refuse the
# library as another package's dependency. SOMNI_PORTABLE=1 builds for any x86-64, for a binary
# to copy to another machine. Other architectures (a Raspberry Pi's arm64) build as they are.
#
# The Swift runtime and Foundation are linked in (--static-swift-stdlib): only what Somni uses
# is loaded and relocated, 5–6 MB less resident memory on every run (an 8-hour 48 kHz M4A night
# peaked at 94.7 MiB against 100.5 MiB), and the binary runs without a Swift toolchain.
set -euo pipefail
cd "$(dirname "$0")/.."
flags=()
if [[ "$(uname -m)" == x86_64 && "${SOMNI_PORTABLE:-0}" != 1 && -r /proc/cpuinfo ]]; then
  cpu_flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
  haswell=1
  for f in avx avx2 fma bmi1 bmi2 f16c movbe abm popcnt sse4_2; do
    [[ "$cpu_flags" == *" $f "* ]] || haswell=0
  done
  if [[ $haswell == 1 ]]; then flags=(-Xswiftc -target-cpu -Xswiftc haswell); fi
fi
exec swift build -c release --static-swift-stdlib "${flags[@]}" "$@"
