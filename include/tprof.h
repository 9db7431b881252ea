/* tprof public C API.
 *
 * libtprof.so is normally preloaded (LD_PRELOAD or tprof-run) into an
 * unchanged program; nothing here is needed for that. This header names
 * the version of the installed library.
 */
#ifndef TPROF_H
#define TPROF_H

#define TPROF_VERSION "0.1.0"

#endif
