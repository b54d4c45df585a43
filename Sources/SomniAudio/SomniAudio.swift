// Decoding and encoding through FFmpeg's libraries.
import CFFmpeg
import SomniCore
