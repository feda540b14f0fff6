/**
 * The part of the embedded gate's native tool (nativeReplaySource.ts) that both of its jobs share: Lean's C ABI
 * as this program reads it, and the runtime and library functions the replay and the compile server both call.
 * Our own declarations, written from Lean's documented C ABI (doc/dev/ffi.md) and the signatures of the
 * library's functions; C text in a raw template literal, so it holds no backquote and no dollar-brace.
 */

export const LEAN_C_ABI = String.raw`#define _GNU_SOURCE /* O_PATH */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * Lean's C ABI (doc/dev/ffi.md): an object is a header of a 32-bit reference count and 16+8+8 bits of size,
 * field count and tag; a constructor's object fields follow the header; scalars are boxed as (n << 1) | 1.
 * The signatures are those of the functions in this build, checked against its compiled code: no function
 * takes the IO world; an IO action returns a constructor of one field (tag 0 holds the value, tag 1 the
 * IO.Error), a BaseIO one its value itself; a structure of one field is that field (a FilePath is its String).
 * ABI_VERSION names the Lean this file was written against; the gate's self-test checks it on the machine.
 */
#define ABI_VERSION "4.35.0"

typedef struct lobj {
    int rc;
    unsigned cs_sz : 16;
    unsigned other : 8;
    unsigned tag : 8;
} lobj;

typedef struct {
    lobj header;
    size_t size;
    size_t capacity;
    lobj *data[];
} larray;

typedef struct {
    lobj header;
    size_t size; /* bytes, with the final NUL */
    size_t capacity;
    size_t length;
    char data[];
} lstring;

static int is_scalar(lobj *o) { return ((uintptr_t)o & 1) == 1; }
static lobj *box(size_t n) { return (lobj *)((n << 1) | 1); }
static unsigned tag_of(lobj *o) { return is_scalar(o) ? (unsigned)((uintptr_t)o >> 1) : o->tag; }
static lobj *field(lobj *o, unsigned k) { return ((lobj **)((char *)o + sizeof(lobj)))[k]; }

/*
 * Every object this program hands to Lean gets one more reference first, so a function that consumes its
 * argument never frees what the program still reads. A replay or a compile is short-lived, and the compile
 * server keeps what it imports for good: what this leaks is nothing.
 */
static lobj *keep(lobj *o) {
    if (!is_scalar(o)) {
        if (o->rc > 0)
            o->rc++;
        else if (o->rc < 0)
            __atomic_fetch_sub(&o->rc, 1, __ATOMIC_RELAXED);
    }
    return o;
}

/* The runtime, and the library functions both jobs call. */
extern void lean_io_mark_end_initialization(void);
extern void lean_init_task_manager(void);
extern lobj *lean_mk_string(const char *);
extern lobj *lean_io_error_to_string(lobj *);
extern lobj *lean_array_mk(lobj *list);
extern lobj *l_Lean_initSearchPath(lobj *sysroot, lobj *searchPath);
extern lobj *l_Lean_importModules(lobj *imports, lobj *opts, uint32_t trust, lobj *plugins, uint8_t leakEnv,
                                  uint8_t loadExts, uint8_t level, lobj *arts);
extern lobj *l_Lean_mkEmptyEnvironment(uint32_t trust);
extern lobj *l_Lean_Options_empty;

static const char *cstr(lobj *s) { return ((lstring *)s)->data; }

static lobj *io_value(lobj *result, const char *what) {
    if (tag_of(result) == 0) return field(result, 0);
    fprintf(stderr, "fimrlvr-replay: %s failed: %s\n", what, cstr(lean_io_error_to_string(keep(field(result, 0)))));
    exit(3);
}
`;
