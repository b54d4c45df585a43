#ifndef SOMNI_CSQLITE_SHIM_H
#define SOMNI_CSQLITE_SHIM_H
#include <sqlite3.h>
/* SQLITE_TRANSIENT is a cast macro Swift cannot import. */
static inline sqlite3_destructor_type somni_sqlite_transient(void) { return SQLITE_TRANSIENT; }
#endif
