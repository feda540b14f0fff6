/**
 * The C source of the kernel gate's replay tool for the embedded Lean (nativeReplayTool.ts builds it with `cc`
 * against that Lean's libleanshared and caches it). On a Lean without its standard library's `.olean` files the
 * gate's Lean replay program (kernelReplayProgram.ts), which imports `Lean`, cannot run; this program reaches
 * the same functions of Lean's (reading a compiled module, importing, `Lean.Kernel.Environment.replay`) as
 * compiled code in the library, and answers in the same format. Unlike that program it trusts no import: the
 * embedded Lean's imports are all the workspace's own modules, so the checked declaration's whole closure, the
 * imported constants included, is replayed from an empty environment (an import compiled under
 * `debug.skipKernelTC` is refused like the document's own declarations). Our own text, written from Lean's documented
 * C ABI and the signatures of the library's functions; it stands in a raw template literal, so it holds no
 * backquote and no dollar-brace but the one that brings in Landlock's definitions (server/landlockC.ts).
 */

/** Bumped with every change of the source: part of the built tool's name, so no stale build is ever run. */
import { LANDLOCK_C_DEFINITIONS } from "../server/landlockC";

export const NATIVE_REPLAY_VERSION = 10;

export const NATIVE_REPLAY_SOURCE = String.raw`/*
 * fim-rlvr's kernel gate, replay step, for a Lean whose standard library is not on disk (the embedded runtime).
 * It is linked against that Lean's own libleanshared and calls Lean's compiled functions: it reads one compiled
 * check module (its .olean: data only, none of the module's code runs), imports what the module imports, sends
 * the checked declaration and every constant it depends on, the module's and the imports' alike, through Lean's
 * own kernel replay from an empty environment, and lists the axioms the declaration rests on. It answers with one line, "FIMRLVR-GATE <json>", in the format the
 * gate's Lean replay program prints.
 *
 * Usage: fimrlvr-replay --self-test
 *        fimrlvr-replay <module.olean> (exact|may-be-private) (<reference.olean>|-) <name component>...
 * The reference is the same check document compiled with the verifier's sorry in the hole, by a process that
 * ran no candidate code: the checked declaration must state exactly what the reference's does (see
 * statement_check), since the compile that made <module.olean> ran the candidate's code.
 *        fimrlvr-replay --compile-server
 * The imports are found through LEAN_PATH.
 *
 * --compile-server is the gate's compile step without Lean's start-up cost: the process initializes Lean once
 * and then, for each request line on stdin, forks a fresh child that runs Lean's own command line (lean_main)
 * on the check document. Each child is a new process in its own session, its output sent to files of the
 * request's; the server itself never elaborates anything. Request:
 *   "<id>\t<cpu seconds>\t<writable folder>\t<stdout file>\t<stderr file>\t<lean argument>..."
 * Before it runs anything the child confines itself with Landlock (see confine): from then on it, and all it
 * starts, may write beneath the request's writable folder only (and /dev/null), has no TCP, and can neither
 * signal nor trace nor open the file descriptors of a process outside its own domain: the server and every
 * other child are out of its reach. A child that cannot confine itself runs nothing: it answers
 * "unconfined <id> <reason>" and exits. A server on a kernel without the Landlock this needs (ABI 6, Linux
 * 6.12) does not start: it prints "FIMRLVR-ZYGOTE unconfined <reason>" instead of "FIMRLVR-ZYGOTE ready".
 * A request whose first argument is --replay runs this program's replay (arguments as above) in the child
 * instead, on the Lean already started: no candidate code ever ran in the server, so its children start clean.
 * A request whose first argument is --probe tries, confined, each way of writing to the paths after it, and
 * of reaching the server, and prints what happened (the gate's tests show the confinement with it).
 * Answers: "started <id> <pid>", then "exited <pid> <code>" or "signalled <pid> <signal>". The line
 * "kill\t<pid>" kills a child's process group (the gate's deadline: the server's pids are those of its own
 * PID namespace, which only it can name); a child's group is killed too when the child ends, so nothing it
 * left in its group outlives it, and a child is killed when the server ends (PR_SET_PDEATHSIG).
 *
 * The declarations below are our own, written from Lean's documented C ABI (doc/dev/ffi.md: an object is a
 * header of a 32-bit reference count and 16+8+8 bits of size, field count and tag; a constructor's object
 * fields follow the header; scalars are boxed as (n << 1) | 1) and from the signatures of the functions in
 * this build (an IO action returns a constructor of one field: tag 0 holds the value, tag 1 the IO.Error).
 * ABI_VERSION names the Lean this file was written against; the gate's self-test checks it on the machine.
 */
#define _GNU_SOURCE /* O_PATH */
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
 * argument never frees what the program still reads. The program is short-lived: what this leaks is nothing.
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

extern lobj *initialize_Lean_Replay(uint8_t builtin);
extern void lean_initialize(void);
extern int lean_main(int argc, char **argv);
/* The C++ side of Lean's start-up (src/initialize/init.cpp), by their exported (mangled) names. */
extern void _ZN4lean15save_stack_infoEb(int main_thread);
extern void _ZN4lean22initialize_util_moduleEv(void);
extern void _ZN4lean24initialize_kernel_moduleEv(void);
extern void _ZN4lean21init_default_print_fnEv(void);
extern void _ZN4lean30initialize_library_core_moduleEv(void);
extern void _ZN4lean25initialize_library_moduleEv(void);
extern void _ZN4lean31initialize_constructions_moduleEv(void);
extern void lean_io_mark_end_initialization(void);
extern void lean_mark_persistent(lobj *o);
extern void lean_init_task_manager(void);
extern lobj *lean_mk_string(const char *);
extern lobj *lean_io_error_to_string(lobj *);
extern lobj *lean_array_mk(lobj *list);
extern lobj *l_Lean_initSearchPath(lobj *sysroot, lobj *searchPath);
extern lobj *l_Lean_readModuleData(lobj *fname);
extern lobj *l_Lean_importModules(lobj *imports, lobj *opts, uint32_t trust, lobj *plugins, uint8_t leakEnv,
                                  uint8_t loadExts, uint8_t level, lobj *arts);
extern lobj *l_Lean_mkEmptyEnvironment(uint32_t trust);
extern lobj *l_Lean_Environment_find_x3f(lobj *env, lobj *name, uint8_t skipRealize);
extern lobj *lean_elab_environment_to_kernel_env(lobj *env);
extern lobj *l_Lean_Kernel_Environment_replay(lobj *constants, lobj *env);
extern lobj *l_Lean_Expr_getUsedConstants(lobj *e);
extern lobj *l_Lean_Name_toString(lobj *n, uint8_t escape);
extern uint8_t lean_expr_eqv(lobj *a, lobj *b); /* Expr.eqv: both borrowed */
extern lobj *l_Std_HashMap_emptyWithCapacity___redArg(lobj *capacity);
extern lobj *l_Std_HashMap_insert___redArg(lobj *beq, lobj *hash, lobj *map, lobj *key, lobj *value);
extern lobj *l_Lean_Name_instBEq;
extern lobj *l_Lean_Options_empty;
extern lobj *l_Lean_instHashableName;

/* Lean's constructor tags, in declaration order (src/Lean/Declaration.lean, src/Lean/Expr.lean). */
enum { CI_AXIOM, CI_DEFN, CI_THM, CI_OPAQUE, CI_QUOT, CI_INDUCT, CI_CTOR, CI_REC };
enum { NAME_ANONYMOUS, NAME_STR, NAME_NUM };
enum { EXPR_CONST = 4, EXPR_APP = 5 };

/* ---- JSON output ---- */

static void json_string(FILE *out, const char *s) {
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(out, "\\u%04x", *p);
        else
            fputc(*p, out);
    }
    fputc('"', out);
}

static const char *cstr(lobj *s) { return ((lstring *)s)->data; }

static void say_message(const char *kind, const char *declaration, const char *message) {
    printf("FIMRLVR-GATE {\"kind\":");
    json_string(stdout, kind);
    if (declaration) {
        printf(",\"declaration\":");
        json_string(stdout, declaration);
    }
    printf(",\"message\":");
    json_string(stdout, message);
    printf("}\n");
    fflush(stdout);
}

/* ---- names ---- */

/* A name's components joined by the unit separator (a number as its digits): a key no two names share. */
static void name_key(lobj *n, char *buf, size_t cap) {
    if (tag_of(n) == NAME_ANONYMOUS) {
        buf[0] = 0;
        return;
    }
    name_key(field(n, 0), buf, cap);
    size_t len = strlen(buf);
    char part[64];
    const char *text = part;
    if (n->tag == NAME_STR)
        text = cstr(field(n, 1));
    else {
        lobj *num = field(n, 1);
        snprintf(part, sizeof part, is_scalar(num) ? "%zu" : "#big", (size_t)((uintptr_t)num >> 1));
    }
    if ((size_t)snprintf(buf + len, cap - len, "%s%s", len > 0 ? "\x1f" : "", text) >= cap - len) {
        /* A name longer than any key here: refuse rather than compare it cut short (two could meet). */
        fprintf(stderr, "fimrlvr-replay: a constant's name is longer than %zu bytes; not replayed\n", cap);
        exit(4);
    }
}

static char *name_text(lobj *n) {
    lobj *s = l_Lean_Name_toString(keep(n), 1);
    return strdup(cstr(s));
}

/* Whether a name is exactly the components of a Lean constant (e.g. "Eq", or "Bool\x1ftrue" for Bool.true). */
static int name_is(lobj *n, const char *wanted) {
    char buf[4096];
    name_key(n, buf, sizeof buf);
    return strcmp(buf, wanted) == 0;
}

/* ---- a set of names, by key ---- */

typedef struct entry {
    char *key;
    lobj *name;
    lobj *info; /* the module's ConstantInfo, when the name is the module's */
    struct entry *next;
} entry;

typedef struct {
    entry **slots;
    size_t count, cap;
} table;

static size_t hash_key(const char *s) {
    size_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static entry *table_find(table *t, const char *key) {
    for (entry *e = t->slots[hash_key(key) % t->cap]; e; e = e->next)
        if (strcmp(e->key, key) == 0) return e;
    return NULL;
}

static entry *table_add(table *t, lobj *name, lobj *info) {
    char buf[4096];
    name_key(name, buf, sizeof buf);
    entry *found = table_find(t, buf);
    if (found) return found;
    entry *e = calloc(1, sizeof *e);
    e->key = strdup(buf);
    e->name = name;
    e->info = info;
    size_t slot = hash_key(buf) % t->cap;
    e->next = t->slots[slot];
    t->slots[slot] = e;
    t->count++;
    return e;
}

static table table_new(size_t cap) {
    table t = {calloc(cap, sizeof(entry *)), 0, cap};
    return t;
}

/* ---- constants ---- */

/* The constants the kernel reads to check ci (for an inductive type its block and constructors too). */
static void push_all(lobj ***todo, size_t *n, size_t *cap, lobj *arr) {
    larray *a = (larray *)arr;
    for (size_t k = 0; k < a->size; k++) {
        if (*n == *cap) *todo = realloc(*todo, (*cap *= 2) * sizeof(lobj *));
        (*todo)[(*n)++] = a->data[k];
    }
}

static void push_list(lobj ***todo, size_t *n, size_t *cap, lobj *list) {
    for (; !is_scalar(list); list = field(list, 1)) {
        if (*n == *cap) *todo = realloc(*todo, (*cap *= 2) * sizeof(lobj *));
        (*todo)[(*n)++] = field(list, 0);
    }
}

static lobj *info_type(lobj *ci) { return field(field(field(ci, 0), 0), 2); }

static void push_uses(lobj ***todo, size_t *n, size_t *cap, lobj *ci) {
    lobj *val = field(ci, 0);
    push_all(todo, n, cap, l_Lean_Expr_getUsedConstants(keep(info_type(ci))));
    switch (ci->tag) {
        case CI_DEFN:
        case CI_THM:
        case CI_OPAQUE:
            push_all(todo, n, cap, l_Lean_Expr_getUsedConstants(keep(field(val, 1))));
            break;
        case CI_INDUCT:
            push_list(todo, n, cap, field(val, 3)); /* all */
            push_list(todo, n, cap, field(val, 4)); /* ctors */
            break;
        case CI_CTOR:
            if (*n == *cap) *todo = realloc(*todo, (*cap *= 2) * sizeof(lobj *));
            (*todo)[(*n)++] = field(val, 1); /* induct */
            break;
        case CI_REC:
            push_list(todo, n, cap, field(val, 1)); /* all */
            break;
        default:
            break;
    }
}

/* The type of the axiom Lean's nativeEqTrue adds for one native computation: @Eq Bool e Bool.true. */
static int native_shaped(lobj *type) {
    if (tag_of(type) != EXPR_APP) return 0;
    lobj *rhs = field(type, 1), *f2 = field(type, 0);
    if (tag_of(f2) != EXPR_APP) return 0;
    lobj *f1 = field(f2, 0);
    if (tag_of(f1) != EXPR_APP) return 0;
    lobj *ty = field(f1, 1), *eq = field(f1, 0);
    return tag_of(eq) == EXPR_CONST && name_is(field(eq, 0), "Eq") && tag_of(ty) == EXPR_CONST &&
           name_is(field(ty, 0), "Bool") && tag_of(rhs) == EXPR_CONST && name_is(field(rhs, 0), "Bool\x1ftrue");
}

/* Whether the name is the wanted components, or where allowed Lean's private form of them (_private.<M>.0.<want>). */
static int is_checked(lobj *n, char **want, int wanted, int may_be_private) {
    char *parts[512];
    int count = 0;
    char texts[512][128];
    for (lobj *m = n; tag_of(m) != NAME_ANONYMOUS && count < 512; m = field(m, 0), count++) {
        if (m->tag == NAME_STR)
            parts[count] = (char *)cstr(field(m, 1));
        else {
            lobj *num = field(m, 1);
            snprintf(texts[count], sizeof texts[count], is_scalar(num) ? "%zu" : "#big",
                     (size_t)((uintptr_t)num >> 1));
            parts[count] = texts[count];
        }
    }
    /* parts[] holds the components last first. */
    if (count < wanted) return 0;
    for (int k = 0; k < wanted; k++)
        if (strcmp(parts[k], want[wanted - 1 - k]) != 0) return 0;
    if (count == wanted) return 1;
    if (!may_be_private || count < wanted + 3) return 0;
    return strcmp(parts[count - 1], "_private") == 0 && strcmp(parts[wanted], "0") == 0;
}

static lobj *io_value(lobj *result, const char *what) {
    if (tag_of(result) == 0) return field(result, 0);
    fprintf(stderr, "fimrlvr-replay: %s failed: %s\n", what, cstr(lean_io_error_to_string(keep(field(result, 0)))));
    exit(3);
}

/*
 * Whether the checked declaration states what the reference module's declaration of the same name states:
 * the same kind (theorem, definition, ...), the same universe parameters in order, and alpha-equivalent types
 * (Lean's Expr.eqv). Both modules come from the same statement text, so anything else means the candidate's
 * code changed what the compiled constant says. Prints the answer's "statement" field (and its message).
 */
static void statement_check(FILE *out, lobj *info, const char *reference, char **want, int wanted, int may_be_private) {
    const char *why = NULL;
    lobj *read = l_Lean_readModuleData(lean_mk_string(reference));
    if (tag_of(read) != 0) {
        fprintf(out, ",\"statement\":\"no-reference\",\"statementMessage\":");
        json_string(out, cstr(lean_io_error_to_string(keep(field(read, 0)))));
        return;
    }
    lobj *pair = field(read, 0);
    larray *names = (larray *)field(field(pair, 0), 1);
    larray *infos = (larray *)field(field(pair, 0), 2);
    lobj *ref = NULL;
    for (size_t k = 0; k < names->size && k < infos->size && !ref; k++)
        if (is_checked(names->data[k], want, wanted, may_be_private)) ref = infos->data[k];
    if (!ref) {
        fprintf(out, ",\"statement\":\"no-reference\",\"statementMessage\":");
        json_string(out, "the reference module (the statement with sorry in the hole) holds no declaration of the checked name");
        return;
    }
    if (info->tag != ref->tag) why = "its kind (theorem, definition, ...) differs from the statement's";
    if (!why) {
        lobj *a = field(field(field(info, 0), 0), 1), *b = field(field(field(ref, 0), 0), 1);
        for (; !why && !is_scalar(a) && !is_scalar(b); a = field(a, 1), b = field(b, 1)) {
            char ka[4096], kb[4096];
            name_key(field(a, 0), ka, sizeof ka);
            name_key(field(b, 0), kb, sizeof kb);
            if (strcmp(ka, kb) != 0) why = "its universe parameters differ from the statement's";
        }
        if (!why && is_scalar(a) != is_scalar(b)) why = "its universe parameters differ from the statement's";
    }
    if (!why && !lean_expr_eqv(info_type(info), info_type(ref)))
        why = "its type differs from the statement's (the file's statement, compiled with sorry in the hole)";
    if (!why) {
        fprintf(out, ",\"statement\":\"same\"");
        return;
    }
    fprintf(out, ",\"statement\":\"differs\",\"statementMessage\":");
    json_string(out, why);
}

static int replay_module(const char *olean, int may_be_private, const char *reference, char **want, int wanted) {
    lobj *path = lean_mk_string(olean);
    lobj *pair = io_value(l_Lean_readModuleData(path), "reading the compiled module");
    lobj *mod = field(pair, 0);
    lobj *imports = field(mod, 0);
    larray *names = (larray *)field(mod, 1);
    larray *infos = (larray *)field(mod, 2);
    if (names->size != infos->size) {
        fprintf(stderr, "fimrlvr-replay: the module's names and constants differ in number (not Lean %s's layout)\n",
                ABI_VERSION);
        return 3;
    }
    table module = table_new(names->size * 2 + 16);
    lobj *checked = NULL;
    for (size_t k = 0; k < names->size; k++) {
        table_add(&module, names->data[k], infos->data[k]);
        if (!checked && is_checked(names->data[k], want, wanted, may_be_private)) checked = names->data[k];
    }
    if (!checked) {
        char message[8192] = "the compiled module holds no declaration ";
        for (int k = 0; k < wanted; k++) {
            if (k > 0) strncat(message, ".", sizeof message - strlen(message) - 1);
            strncat(message, want[k], sizeof message - strlen(message) - 1);
        }
        say_message("missing", NULL, message);
        return 0;
    }
    lobj *env = io_value(
        l_Lean_importModules(keep(imports), keep(l_Lean_Options_empty), 0, lean_array_mk(box(0)), 0, 0, 2, box(1)),
        "importing the module's imports");

    /*
     * Every constant the checked declaration depends on, itself included, the module's and the imported ones
     * alike: the imports are the workspace's own modules (the embedded Lean has no library of its own), and
     * an import is only as sound as the kernel made it, so none is trusted.
     */
    table needed = table_new(names->size * 2 + 4096);
    size_t n = 0, cap = 64, from_module = 0;
    lobj **todo = malloc(cap * sizeof(lobj *));
    todo[n++] = checked;
    while (n > 0) {
        lobj *name = todo[--n];
        char key[4096];
        name_key(name, key, sizeof key);
        if (table_find(&needed, key)) continue;
        entry *own = table_find(&module, key);
        lobj *info = own ? own->info : NULL;
        if (!info) {
            lobj *found = l_Lean_Environment_find_x3f(keep(env), keep(name), 0);
            if (tag_of(found) == 0) continue; /* unknown: the kernel says so when it meets the reference */
            info = field(found, 0);
        } else
            from_module++;
        table_add(&needed, name, info);
        push_uses(&todo, &n, &cap, info);
    }

    /* Through the kernel, from an empty environment, by Lean's own replay. */
    lobj *map = l_Std_HashMap_emptyWithCapacity___redArg(box(needed.count * 2 + 8));
    for (size_t k = 0; k < needed.cap; k++)
        for (entry *e = needed.slots[k]; e; e = e->next)
            map = l_Std_HashMap_insert___redArg(keep(l_Lean_Name_instBEq), keep(l_Lean_instHashableName), map,
                                                keep(e->name), keep(e->info));
    char *checked_text = name_text(checked);
    lobj *empty = io_value(l_Lean_mkEmptyEnvironment(0), "making an empty environment");
    lobj *replayed = l_Lean_Kernel_Environment_replay(keep(map), lean_elab_environment_to_kernel_env(keep(empty)));
    if (tag_of(replayed) != 0) {
        say_message("kernel-rejected", checked_text, cstr(lean_io_error_to_string(keep(field(replayed, 0)))));
        return 0;
    }

    /*
     * The statement against the reference, written aside first so that the answer line is whole. "-": no
     * reference given (the gate's own self-test), so no "statement" field; the gate requires one otherwise.
     */
    char *statement = NULL;
    size_t statement_len = 0;
    if (strcmp(reference, "-") != 0) {
        FILE *aside = open_memstream(&statement, &statement_len);
        char key[4096];
        name_key(checked, key, sizeof key);
        statement_check(aside, table_find(&module, key)->info, reference, want, wanted, may_be_private);
        fclose(aside);
    }

    /* Every axiom the checked declaration rests on, through the module's constants and the imported ones. */
    table seen = table_new(4096);
    n = 0;
    todo[n++] = checked;
    printf("FIMRLVR-GATE {\"kind\":\"replayed\",\"declaration\":");
    json_string(stdout, checked_text);
    printf(",\"replayed\":%zu,\"fromModule\":%zu%s,\"axioms\":[", needed.count, from_module,
           statement ? statement : "");
    int first = 1;
    while (n > 0) {
        lobj *name = todo[--n];
        char key[4096];
        name_key(name, key, sizeof key);
        if (table_find(&seen, key)) continue;
        table_add(&seen, name, NULL);
        entry *own = table_find(&module, key);
        lobj *info = own ? own->info : NULL;
        if (!info) {
            lobj *found = l_Lean_Environment_find_x3f(keep(env), keep(name), 0);
            if (tag_of(found) == 0) continue;
            info = field(found, 0);
        }
        if (info->tag == CI_AXIOM) {
            printf("%s{\"name\":", first ? "" : ",");
            json_string(stdout, name_text(name));
            printf(",\"declaredInDocument\":%s,\"nativeShape\":%s}", own ? "true" : "false",
                   native_shaped(info_type(info)) ? "true" : "false");
            first = 0;
        }
        push_uses(&todo, &n, &cap, info);
    }
    printf("]}\n");
    fflush(stdout);
    return 0;
}

/* ---- confinement (Landlock) ---- */

${LANDLOCK_C_DEFINITIONS}
static long landlock_abi(void) {
    return syscall(SYS_landlock_create_ruleset, NULL, 0, FIM_LANDLOCK_CREATE_RULESET_VERSION);
}

static char confine_why[512];

/* One rule: rights beneath (or, for a file, on) path. 0, or -1 with confine_why set. */
static int allow(int ruleset, const char *path, uint64_t rights) {
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0) {
        snprintf(confine_why, sizeof confine_why, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    struct fim_path_beneath_attr rule = {rights, fd};
    long done = syscall(SYS_landlock_add_rule, ruleset, FIM_LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
    int saved = errno;
    close(fd);
    if (done != 0) {
        snprintf(confine_why, sizeof confine_why, "landlock_add_rule on %s: %s", path, strerror(saved));
        return -1;
    }
    return 0;
}

/*
 * Confines the calling process (single-threaded: a child just forked) and everything it starts from now on:
 * it may write beneath the folder writable alone (and write /dev/null), has no TCP, and cannot signal, trace,
 * or open the file descriptors of a process outside its own Landlock domain. Reading is not confined (the
 * sandbox makes the file system read-only already). NULL when confined, else why not.
 */
static const char *confine(const char *writable) {
    long abi = landlock_abi();
    if (abi < 0) {
        snprintf(confine_why, sizeof confine_why, "Landlock is not available (%s)", strerror(errno));
        return confine_why;
    }
    if (abi < FIM_LANDLOCK_MIN_ABI) {
        snprintf(confine_why, sizeof confine_why, "this kernel's Landlock ABI is %ld, not %d", abi,
                 FIM_LANDLOCK_MIN_ABI);
        return confine_why;
    }
    struct stat folder;
    if (stat(writable, &folder) != 0 || !S_ISDIR(folder.st_mode)) {
        snprintf(confine_why, sizeof confine_why, "the writable folder %s is not a folder", writable);
        return confine_why;
    }
    struct fim_ruleset_attr attr = {FIM_FS_WRITES, FIM_NET_TCP, FIM_SCOPES};
    int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
    if (ruleset < 0) {
        snprintf(confine_why, sizeof confine_why, "landlock_create_ruleset: %s", strerror(errno));
        return confine_why;
    }
    int failed = allow(ruleset, writable, FIM_FS_WRITES) || allow(ruleset, "/dev/null", FIM_FS_WRITE_FILE | FIM_FS_TRUNCATE);
    if (!failed && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        snprintf(confine_why, sizeof confine_why, "PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
        failed = 1;
    }
    if (!failed && syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) {
        snprintf(confine_why, sizeof confine_why, "landlock_restrict_self: %s", strerror(errno));
        failed = 1;
    }
    close(ruleset);
    return failed ? confine_why : NULL;
}

/* What each way of writing to path, and of reaching the server, gave: "ok" or the error's name. */
static const char *outcome(int done) { return done ? "ok" : strerror(errno); }

static int probe(char **paths, int count) {
    for (int k = 0; k < count; k++) {
        const char *p = paths[k];
        char other[4096];
        int fd = open(p, O_WRONLY | O_APPEND);
        printf("write %s: %s\n", p, outcome(fd >= 0 && write(fd, "x", 1) == 1));
        if (fd >= 0) close(fd);
        printf("truncate %s: %s\n", p, outcome(truncate(p, 0) == 0));
        snprintf(other, sizeof other, "%s.new", p);
        fd = open(other, O_WRONLY | O_CREAT | O_EXCL, 0600);
        printf("create %s: %s\n", other, outcome(fd >= 0));
        if (fd >= 0) close(fd);
        snprintf(other, sizeof other, "%s.dir", p);
        printf("mkdir %s: %s\n", other, outcome(mkdir(other, 0700) == 0));
        snprintf(other, sizeof other, "%s.moved", p);
        printf("rename %s: %s\n", p, outcome(rename(p, other) == 0 && rename(other, p) == 0));
        printf("unlink %s: %s\n", p, outcome(unlink(p) == 0));
    }
    pid_t server = getppid();
    char fd_path[64];
    snprintf(fd_path, sizeof fd_path, "/proc/%d/fd/1", (int)server);
    int answers = open(fd_path, O_WRONLY);
    printf("open-server-answers: %s\n", outcome(answers >= 0));
    if (answers >= 0) close(answers);
    printf("signal-server: %s\n", outcome(kill(server, 0) == 0));
    fflush(stdout);
    return 0;
}

/* ---- the compile server ---- */

static int child_signal[2];

static void on_child(int sig) {
    (void)sig;
    int saved = errno;
    if (write(child_signal[1], "c", 1) < 0) { /* full: a wake-up is pending already */ }
    errno = saved;
}

/* The children running now: only these may be killed on the gate's word. */
static pid_t *live;
static size_t live_count, live_cap;

static int is_live(pid_t pid) {
    for (size_t k = 0; k < live_count; k++)
        if (live[k] == pid) return 1;
    return 0;
}

static void forget(pid_t pid) {
    for (size_t k = 0; k < live_count; k++)
        if (live[k] == pid) {
            live[k] = live[--live_count];
            return;
        }
}

/* Runs one request in a forked child; answers "started <id> <pid>". */
static void start_compile(char *line) {
    char *fields[4096];
    int count = 0;
    for (char *p = line; count < 4096;) {
        fields[count++] = p;
        char *tab = strchr(p, '\t');
        if (!tab) break;
        *tab = 0;
        p = tab + 1;
    }
    if (count == 2 && strcmp(fields[0], "kill") == 0) {
        pid_t pid = (pid_t)atol(fields[1]);
        if (pid > 0 && is_live(pid)) kill(-pid, SIGKILL);
        return;
    }
    if (count < 6) {
        printf("refused %s\n", fields[0]);
        fflush(stdout);
        return;
    }
    fflush(stdout);
    pid_t server = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        /* A compile never outlives its server (the gate stopped it, or it died): the kernel kills it then. */
        prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
        if (getppid() != server) _exit(125);
        setsid();
        signal(SIGCHLD, SIG_DFL);
        close(child_signal[0]);
        close(child_signal[1]);
        /* First of all: nothing of the request runs unconfined. fd 1 is still the server's answer pipe. */
        const char *why = confine(fields[2]);
        if (why) {
            dprintf(1, "unconfined %s %s\n", fields[0], why);
            _exit(125);
        }
        setenv("TMPDIR", fields[2], 1);
        long cpu = atol(fields[1]);
        if (cpu > 0) {
            struct rlimit limit = {(rlim_t)cpu, (rlim_t)cpu};
            setrlimit(RLIMIT_CPU, &limit);
        }
        int in = open("/dev/null", O_RDONLY);
        int out = open(fields[3], O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int err = open(fields[4], O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (in < 0 || out < 0 || err < 0) _exit(125);
        dup2(in, 0);
        dup2(out, 1);
        dup2(err, 2);
        close(in);
        close(out);
        close(err);
        if (strcmp(fields[5], "--probe") == 0) _exit(probe(fields + 6, count - 6));
        if (strcmp(fields[5], "--replay") == 0 && count >= 10) {
            lean_io_mark_end_initialization();
            lean_init_task_manager();
            const char *sysroot = getenv("FIMRLVR_LEAN_SYSROOT");
            io_value(l_Lean_initSearchPath(lean_mk_string(sysroot ? sysroot : "/nonexistent"), box(0)),
                     "setting the search path from LEAN_PATH");
            int code = replay_module(fields[6], strcmp(fields[7], "may-be-private") == 0, fields[8], fields + 9,
                                     count - 9);
            fflush(stdout);
            _exit(code);
        }
        char *args[4096];
        int n = 0;
        args[n++] = "lean";
        for (int k = 5; k < count; k++) args[n++] = fields[k];
        args[n] = NULL;
        exit(lean_main(n, args));
    }
    if (pid < 0)
        printf("refused %s\n", fields[0]);
    else {
        if (live_count == live_cap) live = realloc(live, (live_cap = live_cap * 2 + 16) * sizeof(pid_t));
        live[live_count++] = pid;
        printf("started %s %d\n", fields[0], (int)pid);
    }
    fflush(stdout);
}

static void report_children(void) {
    char drain[256];
    while (read(child_signal[0], drain, sizeof drain) > 0) {
    }
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        /* What the child left in its process group goes with it. */
        if (is_live(pid)) kill(-pid, SIGKILL);
        forget(pid);
        if (WIFEXITED(status))
            printf("exited %d %d\n", (int)pid, WEXITSTATUS(status));
        else if (WIFSIGNALED(status))
            printf("signalled %d %d\n", (int)pid, WTERMSIG(status));
    }
    fflush(stdout);
}

static int compile_server(void) {
    /* No server where its children could not be confined: the gate then starts a fresh sandboxed Lean. */
    long abi = landlock_abi();
    if (abi < FIM_LANDLOCK_MIN_ABI) {
        if (abi < 0)
            printf("FIMRLVR-ZYGOTE unconfined Landlock is not available here (%s); it needs Linux 6.12 or later\n",
                   strerror(errno));
        else
            printf("FIMRLVR-ZYGOTE unconfined this kernel's Landlock ABI is %ld; confining a compile needs %d (Linux 6.12 or later)\n",
                   abi, FIM_LANDLOCK_MIN_ABI);
        fflush(stdout);
        return 3;
    }
    /* The whole of Lean: the children elaborate. lean_main in each child finishes the start-up. */
    lean_initialize();
    /*
     * The objects every compile's environment starts from (the builtin tables its extensions are made of) are
     * marked persistent once, here, as Lean marks an imported environment: each child would otherwise mark
     * them itself, writing to every one of them and so copying the server's memory into its own page by page
     * (most of a small compile's time). Nothing of a request has run yet.
     */
    lean_io_mark_end_initialization();
    lean_mark_persistent(io_value(l_Lean_mkEmptyEnvironment(0), "making the environment the compiles start from"));
    if (pipe(child_signal) < 0) return 3;
    for (int k = 0; k < 2; k++) {
        fcntl(child_signal[k], F_SETFL, O_NONBLOCK);
        fcntl(child_signal[k], F_SETFD, FD_CLOEXEC);
    }
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_child;
    action.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    sigaction(SIGCHLD, &action, NULL);
    printf("FIMRLVR-ZYGOTE ready\n");
    fflush(stdout);
    size_t cap = 1 << 16, len = 0;
    char *buffer = malloc(cap);
    for (;;) {
        struct pollfd fds[2] = {{0, POLLIN, 0}, {child_signal[0], POLLIN, 0}};
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            return 3;
        }
        if (fds[1].revents & POLLIN) report_children();
        if (fds[0].revents & (POLLIN | POLLHUP)) {
            if (len + 4096 > cap) buffer = realloc(buffer, cap *= 2);
            ssize_t got = read(0, buffer + len, cap - len - 1);
            if (got <= 0) return 0; /* the gate went away: so does the server */
            len += (size_t)got;
            char *start = buffer, *end;
            while ((end = memchr(start, '\n', buffer + len - start))) {
                *end = 0;
                start_compile(start);
                start = end + 1;
            }
            len -= (size_t)(start - buffer);
            memmove(buffer, start, len);
        }
    }
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "--compile-server") == 0) return compile_server();
    if (argc == 2 && strcmp(argv[1], "--self-test") == 0) {
        printf("FIMRLVR-GATE {\"kind\":\"ready\",\"abi\":\"%s\"}\n", ABI_VERSION);
        return 0;
    }
    if (argc < 5 || (strcmp(argv[2], "exact") != 0 && strcmp(argv[2], "may-be-private") != 0)) {
        fprintf(stderr, "usage: fimrlvr-replay (--self-test | <module.olean> (exact|may-be-private) (<reference.olean>|-) <name component>...)\n");
        return 2;
    }
    /*
     * Lean's start-up in the order lean_initialize runs it, but of Lean's own modules only those the replay
     * needs (Lean.Replay and what it imports: the environment, the kernel's interface, FoldConsts), not the
     * whole of Lean (its elaborator, server, compiler): a tenth of the start-up time.
     */
    _ZN4lean15save_stack_infoEb(1);
    _ZN4lean22initialize_util_moduleEv();
    io_value(initialize_Lean_Replay(1), "initializing Lean's replay");
    _ZN4lean24initialize_kernel_moduleEv();
    _ZN4lean21init_default_print_fnEv();
    _ZN4lean30initialize_library_core_moduleEv();
    _ZN4lean25initialize_library_moduleEv();
    _ZN4lean31initialize_constructions_moduleEv();
    lean_io_mark_end_initialization();
    lean_init_task_manager();
    const char *sysroot = getenv("FIMRLVR_LEAN_SYSROOT");
    io_value(l_Lean_initSearchPath(lean_mk_string(sysroot ? sysroot : "/nonexistent"), box(0)),
             "setting the search path from LEAN_PATH");
    return replay_module(argv[1], strcmp(argv[2], "may-be-private") == 0, argv[3], argv + 4, argc - 4);
}
`;
