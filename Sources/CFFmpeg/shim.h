#ifndef SOMNI_CFFMPEG_SHIM_H
#define SOMNI_CFFMPEG_SHIM_H
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libswresample/swresample.h>
#include <libavutil/opt.h>
#include <libavutil/channel_layout.h>
#include <libavutil/error.h>
#include <libavutil/samplefmt.h>
#include <libavutil/audio_fifo.h>

#if defined(__GLIBC__)
#include <malloc.h>
/* See SomniAudio's ProcessMemory.swift: decoding a long night with glibc's dynamic mmap
   threshold fragments the heap. */
static inline void somni_fix_mmap_threshold(int bytes) { mallopt(M_MMAP_THRESHOLD, bytes); }
#else
static inline void somni_fix_mmap_threshold(int bytes) { (void)bytes; }
#endif

/* Macros Swift cannot import. */
static inline int somni_averror_eof(void) { return AVERROR_EOF; }
static inline int somni_averror_invalid_data(void) { return AVERROR_INVALIDDATA; }
static inline int somni_averror_eagain(void) { return AVERROR(EAGAIN); }
static inline int somni_averror_stream_not_found(void) { return AVERROR_STREAM_NOT_FOUND; }
static inline int somni_averror_decoder_not_found(void) { return AVERROR_DECODER_NOT_FOUND; }
static inline int64_t somni_nopts_value(void) { return AV_NOPTS_VALUE; }
static inline int somni_time_base(void) { return AV_TIME_BASE; }
#endif
