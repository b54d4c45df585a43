# The test-night scenes of the evaluation scripts, as 'somni synth' flags; sourced, not run.
#   scene_flags SCENE   sets the array SCENE_FLAGS, or fails for an unknown scene
# quiet: a quiet bedroom; fan: a fan, with the noise recordings taking turns under it at its
# level; steady-fan: one fan alone; noise-only: street background and bedroom sounds, no sleep
# sounds (every event found there is a false one).
scene_flags() {
  case $1 in
    quiet) SCENE_FLAGS=(--scene quiet) ;;
    fan) SCENE_FLAGS=(--scene fan) ;;
    steady-fan) SCENE_FLAGS=(--scene fan --no-recorded-bed) ;;
    noise-only) SCENE_FLAGS=(--scene street --noise-only) ;;
    *) echo "unknown scene '$1' (quiet, fan, steady-fan, noise-only)" >&2; return 64 ;;
  esac
}
