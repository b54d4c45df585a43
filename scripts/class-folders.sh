# The default recipe's class folders, as links into ../shared/data; sourced, not run.
#   stage_class_folders DATA DIR   makes DIR/{snoring,speech,cough,other}, each holding links
# snoring: Khan's snoring clips; speech: Speech Commands words (a stand-in for sleep-talk);
# cough: CoughSeg's coughs (sidecars mark their onsets and offsets); other: Khan's ten
# non-snoring categories, CoughSeg's no-cough recordings and the noise recordings.
stage_class_folders() {
  mkdir -p "$2"/{snoring,speech,cough,other}
  ln -s "$1/snoring-khan/snoring" "$2/snoring/khan"
  ln -s "$1/speech-commands" "$2/speech/speech-commands"
  ln -s "$1/cough-coughseg/cough" "$2/cough/coughseg"
  ln -s "$1/snoring-khan/no_snoring" "$2/other/khan-no-snoring"
  ln -s "$1/cough-coughseg/no_cough" "$2/other/coughseg-no-cough"
  ln -s "$1/noise" "$2/other/noise"
}
