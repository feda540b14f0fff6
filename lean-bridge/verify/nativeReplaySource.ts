/**
 * The C source of the kernel gate's native tool for the embedded Lean (nativeReplayTool.ts builds it with `cc`
 * against that Lean's libleanshared and caches it), and its first job, the replay. On a Lean without its
 * standard library's `.olean` files the gate's Lean replay program (kernelReplayProgram.ts), which imports
 * `Lean`, cannot run; this program reaches the same functions of Lean's (reading a compiled module, importing,
 * `Lean.Kernel.Environment.replay`) as compiled code in the library, and answers in the same format. Unlike that
 * program it trusts no import: the embedded Lean's imports are all the workspace's own modules, so the checked
 * declaration's whole closure, the imported constants included, is replayed from an empty environment (an
 * import compiled under `debug.skipKernelTC` is refused like the document's own declarations). The program's
 * second job, the compile server, is compileServerSource.ts (its children's confinement childConfinementSource.ts);
 * what both share, nativeLeanAbi.ts. Our own text,
 * written from Lean's documented C ABI and the signatures of the library's functions; it stands in a raw
 * template literal, so it holds no backquote and no dollar-brace.
 */
import { CHILD_CONFINEMENT_C } from "./childConfinementSource";
import { COMPILE_SERVER_C } from "./compileServerSource";
import { LEAN_C_ABI } from "./nativeLeanAbi";

/** Bumped with every change of the source: part of the built tool's name, so no stale build is ever run. */
export const NATIVE_REPLAY_VERSION = 11;

const PROGRAM_COMMENT = String.raw`/*
 * fim-rlvr's kernel gate, replay step, for a Lean whose standard library is not on disk (the embedded runtime).
 * It is linked against that Lean's own libleanshared and calls Lean's compiled functions: it reads one compiled
 * check module (its .olean: data only, none of the module's code runs), imports what the module imports, sends
 * the checked declaration and every constant it depends on, the module's and the imports' alike, through Lean's
 * own kernel replay from an empty environment, and lists the axioms the declaration rests on. It answers with
 * one line, "FIMRLVR-GATE <json>", in the format the gate's Lean replay program prints.
 *
 * Usage: fimrlvr-replay --self-test
 *        fimrlvr-replay <module.olean> (exact|may-be-private) (<reference.olean>|-) <name component>...
 * The reference is the same check document compiled with the verifier's sorry in the hole, by a process that
 * ran no candidate code: the checked declaration must state exactly what the reference's does (see
 * statement_check), since the compile that made <module.olean> ran the candidate's code.
 *        fimrlvr-replay --compile-server [--trusted]
 * The gate's compile server (--trusted: the one given no candidate's text) (its part of this program says how it works). The imports are found through
 * LEAN_PATH.
 */
`;

/** The replay: reading the module, the closure of the checked declaration, Lean's replay, the statement. */
const REPLAY_C = String.raw`extern lobj *initialize_Lean_Replay(uint8_t builtin);
/* The C++ side of Lean's start-up (src/initialize/init.cpp), by their exported (mangled) names. */
extern void _ZN4lean15save_stack_infoEb(int main_thread);
extern void _ZN4lean22initialize_util_moduleEv(void);
extern void _ZN4lean24initialize_kernel_moduleEv(void);
extern void _ZN4lean21init_default_print_fnEv(void);
extern void _ZN4lean30initialize_library_core_moduleEv(void);
extern void _ZN4lean25initialize_library_moduleEv(void);
extern void _ZN4lean31initialize_constructions_moduleEv(void);
extern lobj *l_Lean_readModuleData(lobj *fname);
extern lobj *l_Lean_Environment_find_x3f(lobj *env, lobj *name, uint8_t skipRealize);
extern lobj *lean_elab_environment_to_kernel_env(lobj *env);
extern lobj *l_Lean_Kernel_Environment_replay(lobj *constants, lobj *env);
extern lobj *l_Lean_Expr_getUsedConstants(lobj *e);
extern lobj *l_Lean_Name_toString(lobj *n, uint8_t escape);
extern uint8_t lean_expr_eqv(lobj *a, lobj *b); /* Expr.eqv: both borrowed */
extern lobj *l_Std_HashMap_emptyWithCapacity___redArg(lobj *capacity);
extern lobj *l_Std_HashMap_insert___redArg(lobj *beq, lobj *hash, lobj *map, lobj *key, lobj *value);
extern lobj *l_Lean_Name_instBEq;
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

static int replay_module(const char *olean, int may_be_private, const char *reference, char **want, int wanted,
                         lobj *imported) {
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
    /*
     * Where to look up the imported constants: the compile server's import of the check document's header (a
     * lookup table only: what is found there is replayed below like the rest), else the module's own imports.
     */
    lobj *env = imported ? imported
                         : io_value(l_Lean_importModules(keep(imports), keep(l_Lean_Options_empty), 0,
                                                         lean_array_mk(box(0)), 0, 0, 2, box(1)),
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

`;

/** The program's entry: the replay from nothing but the modules it needs, or the compile server. */
const MAIN_C = String.raw`int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "--compile-server") == 0) return compile_server(0);
    if (argc == 3 && strcmp(argv[1], "--compile-server") == 0 && strcmp(argv[2], "--trusted") == 0)
        return compile_server(1);
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
    return replay_module(argv[1], strcmp(argv[2], "may-be-private") == 0, argv[3], argv + 4, argc - 4, NULL);
}
`;

export const NATIVE_REPLAY_SOURCE = [
  PROGRAM_COMMENT,
  LEAN_C_ABI,
  REPLAY_C,
  CHILD_CONFINEMENT_C,
  COMPILE_SERVER_C,
  MAIN_C,
].join("\n");
