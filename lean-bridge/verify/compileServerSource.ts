/**
 * The C source of the embedded gate's compile server (compileZygote.ts speaks its protocol), the second job of
 * the gate's native tool (nativeReplaySource.ts assembles the program): a Lean started once, whose confined
 * children compile the check documents and run the replays, and the probe that shows the confinement. The
 * server imports each check document's header (the workspace's own modules) once and elaborates nothing of a
 * document itself: each child elaborates the rest on that import, through Lean's own frontend functions. Our
 * own text, written from Lean's documented C ABI and the signatures of the library's functions (nativeLeanAbi.ts);
 * it stands in a raw template literal, so it holds no backquote and no dollar-brace. How a child confines itself
 * (confine), and the probe that shows it, are childConfinementSource.ts.
 */
export const COMPILE_SERVER_C = String.raw`/*
 * --compile-server is the gate's compile step without Lean's start-up cost: the process initializes Lean once
 * and then, for each request line on stdin, forks a fresh child that compiles the check document. Each child
 * is a new process in its own session, its output sent to files of the request's. Request:
 *   "<id>\t<cpu seconds>\t<writable folder>\t<stdout file>\t<stderr file>\t[--header\t<hex>\t]<lean argument>..."
 * With "--header <hex of a text>", the document begins with that text, whose header (prelude, imports) the
 * server imports once (header_for), before the fork, for every document that begins with it: the imported
 * modules are the workspace's own, compiled by the verifier, and no candidate's text is in them, so the
 * server still runs no candidate's code. The child then elaborates the rest of the document on that import
 * (elaborate) instead of running Lean's command line (lean_main), which imports by itself; a header the
 * server cannot import, or one past MAX_HEADERS, leaves the child to lean_main, as without --header.
 * Before it runs anything the child confines itself with Landlock (see confine): from then on it, and all it
 * starts, may write beneath the request's writable folder only (and /dev/null), has no TCP, and can neither
 * signal nor trace nor open the file descriptors of a process outside its own domain: the server and every
 * other child are out of its reach. A child that cannot confine itself runs nothing: it answers
 * "unconfined <id> <reason>" and exits. A server on a kernel without the Landlock this needs (ABI 6, Linux
 * 6.12) does not start: it prints "FIMRLVR-ZYGOTE unconfined <reason>" instead of "FIMRLVR-ZYGOTE ready".
 * A request whose first argument (after the header) is --replay runs this program's replay (replay_module) in
 * the child instead, on the Lean already started: no candidate code ever ran in the server, so its children
 * start clean; the header's import is where the replay looks up the imported constants (it replays them all
 * from an empty environment still). A request whose first argument is --probe tries, confined, each way of
 * writing to the paths after it, and of reaching the server, and prints what happened (the gate's tests show
 * the confinement with it).
 * A compile's request may end with "--then" and a second request's id, folder, output files and command (its
 * replay): the server starts that one the moment the compile exits with 0 (no round trip to the gate between
 * the two), and answers "refused <id>" for it otherwise.
 * Answers: "started <id> <pid>", then "exited <pid> <code>" or "signalled <pid> <signal>", said as soon as the
 * child's output is written, before its exit has unmapped its memory: a child that runs no candidate's code (a
 * replay, and every child of the server started with --trusted) says it itself; a candidate's compile writes its
 * code on a pipe of its own to the server, which kills its process group before it answers (see done_pipe);
 * the reap of a child answered so says nothing more. Once, the line
 * "FIMRLVR-ZYGOTE full" when the server holds MAX_HEADERS imports (the gate replaces it once its compiles have
 * ended). The line "warm\t<hex>" imports that header now, unanswered (the gate sends it as a hole's check starts,
 * so that its first proof does not wait for the import). The line "kill\t<pid>" kills a child's process group (the gate's deadline: the server's pids are
 * those of its own PID namespace, which only it can name); a child's group is killed too when the child ends,
 * so nothing it left in its group outlives it, and a child is killed when the server ends (PR_SET_PDEATHSIG).
 */
extern void lean_initialize(void);
extern int lean_main(int argc, char **argv);
extern void lean_mark_persistent(lobj *o);
extern lobj *l_Lean_Elab_parseImports(lobj *input, lobj *fileName);
extern lobj *l_Lean_Elab_process(lobj *input, lobj *env, lobj *opts, lobj *fileName);
extern lobj *l_Lean_Environment_setMainModule(lobj *env, lobj *name);
extern lobj *l_Lean_Name_mkStr1(lobj *s);
extern lobj *l_Lean_Name_mkStr2(lobj *a, lobj *b);
extern lobj *l_Lean_Options_setBool(lobj *opts, lobj *name, uint8_t value);
extern lobj *l_Lean_writeModule(lobj *env, lobj *fname, uint8_t split);
extern lobj *l_Lean_MessageLog_toList(lobj *log); /* borrowed */
extern uint8_t l_Lean_MessageLog_hasErrors(lobj *log);
extern lobj *l_Lean_Message_toJson(lobj *msg); /* BaseIO: the value itself */
extern lobj *l_Lean_Json_compress(lobj *json);
extern void _ZN4lean23set_max_memory_megabyteEj(unsigned megabytes);
extern lobj *lean_enable_initializer_execution(void);
extern void lean_init_task_manager_using(unsigned workers);

/* ---- the check documents' headers, imported once per server ---- */

/*
 * A header the server imported (the workspace's own modules: the verifier builds them, no candidate's text is in
 * them), and the environment its documents start from. Imported in the server, before any fork, with Lean's
 * leakEnv (the environment is marked persistent, as Lean's own frontend marks its imports), so the children
 * share its memory without writing to it; never freed, so the number of headers is bounded (MAX_HEADERS).
 */
typedef struct {
    char *text;
    /* The bytes of text that Lean's header parser read (prelude, imports): what a document's compile blanks. */
    size_t parsed;
    lobj *env;
} header_env;

#define MAX_HEADERS 32
static header_env headers[MAX_HEADERS];
static int header_count;
static int headers_full_said;

static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

/*
 * The environment of a header given as the hex of its text, imported now if it is new; NULL when it cannot be
 * (a malformed request, a header Lean does not parse or import, or MAX_HEADERS reached): the child then runs
 * Lean's own command line, which imports by itself and reports what fails as Lean does.
 */
static header_env *header_for(const char *hex) {
    size_t len = strlen(hex);
    if (len % 2 != 0 || len == 0) return NULL;
    char *text = malloc(len / 2 + 1);
    for (size_t k = 0; k < len / 2; k++) {
        int hi = hex_value(hex[2 * k]), lo = hex_value(hex[2 * k + 1]);
        if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
            free(text);
            return NULL;
        }
        text[k] = (char)(hi * 16 + lo);
    }
    text[len / 2] = 0;
    for (int k = 0; k < header_count; k++)
        if (strcmp(headers[k].text, text) == 0) {
            free(text);
            return &headers[k];
        }
    if (header_count == MAX_HEADERS) {
        /* The gate then starts a fresh server for the next documents (this one's memory holds every header). */
        if (!headers_full_said) printf("FIMRLVR-ZYGOTE full\n");
        headers_full_said = 1;
        free(text);
        return NULL;
    }
    lobj *parsed = l_Lean_Elab_parseImports(lean_mk_string(text), box(0));
    if (tag_of(parsed) != 0) {
        free(text);
        return NULL;
    }
    lobj *triple = field(parsed, 0);
    if (l_Lean_MessageLog_hasErrors(keep(field(field(triple, 1), 1)))) {
        free(text);
        return NULL;
    }
    /*
     * As Lean's command line imports a header: its default trust level (LEAN_BELIEVER_TRUST_LEVEL + 1), the
     * extensions loaded, the private (whole) level of every module. Lean runs the imported modules'
     * initializers only when told to before each import, as its command line does (the modules are the
     * workspace's own).
     */
    lean_enable_initializer_execution();
    lobj *imported = l_Lean_importModules(keep(field(triple, 0)), keep(l_Lean_Options_empty), 1025,
                                          lean_array_mk(box(0)), 1, 1, 2, box(1));
    if (tag_of(imported) != 0) {
        free(text);
        return NULL;
    }
    /* Where the parser stopped (a 1-based line, a column in code points), as a byte offset into the text. */
    lobj *pos = field(field(triple, 1), 0);
    size_t line = (size_t)((uintptr_t)field(pos, 0) >> 1), column = (size_t)((uintptr_t)field(pos, 1) >> 1);
    size_t at = 0;
    for (size_t l = 1; l < line && text[at]; at++)
        if (text[at] == '\n') l++;
    for (size_t c = 0; c < column && text[at] && text[at] != '\n'; c++)
        for (at++; ((unsigned char)text[at] & 0xC0) == 0x80; at++) {
        }
    headers[header_count].parsed = at;
    headers[header_count].text = text;
    headers[header_count].env = field(imported, 0);
    return &headers[header_count++];
}

/* The environment of a header given as the hex of its text, if this process imported it already; else NULL. */
static header_env *header_known(const char *hex) {
    size_t len = strlen(hex);
    if (len % 2 != 0 || len == 0) return NULL;
    for (int k = 0; k < header_count; k++) {
        const char *text = headers[k].text;
        size_t at = 0;
        for (; at < len / 2 && text[at]; at++)
            if (hex_value(hex[2 * at]) * 16 + hex_value(hex[2 * at + 1]) != (unsigned char)text[at]) break;
        if (at == len / 2 && !text[at]) return &headers[k];
    }
    return NULL;
}

/* A whole file's bytes, NUL-terminated (NULL when it cannot be read or holds a NUL). */
static char *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *data = malloc(cap);
    size_t got;
    while ((got = fread(data + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n + 1 == cap) data = realloc(data, cap *= 2);
    }
    fclose(f);
    data[n] = 0;
    if (strlen(data) != n) {
        free(data);
        return NULL;
    }
    *size = n;
    return data;
}

/*
 * The compile of a check document that begins with an imported header, in a confined child: Lean's frontend
 * (Lean.Elab.process) elaborates the rest of the document on the header's environment, as lean would after
 * importing it, the header's own characters blanked (so every position stays where Lean's command line puts
 * it); the messages are printed as 'lean --json' prints them, and the module is written with Lean's
 * writeModule when none is an error. args: Lean's command line as the gate gives it (--json, -M<MB>,
 * -o <olean>, --root=<folder>, the file). -1 when the arguments or the file are not of that form (the caller
 * then runs Lean's command line itself), else the exit code.
 */
static int elaborate(header_env *header, char **args, int count) {
    const char *output = NULL, *file = NULL;
    long memory = 0;
    int json = 0;
    for (int k = 0; k < count; k++) {
        if (strcmp(args[k], "--json") == 0)
            json = 1;
        else if (strncmp(args[k], "-M", 2) == 0 && args[k][2])
            memory = atol(args[k] + 2);
        else if (strcmp(args[k], "-o") == 0 && k + 1 < count)
            output = args[++k];
        else if (strncmp(args[k], "--root=", 7) == 0)
            continue;
        else if (k == count - 1 && args[k][0] != '-')
            file = args[k];
        else
            return -1;
    }
    size_t size = 0, header_len = strlen(header->text);
    char *text = file && json && output ? read_file(file, &size) : NULL;
    if (!text || size < header_len || memcmp(text, header->text, header_len) != 0) return -1;
    /* The module's name as Lean's command line gives it with --root at the file's folder: the file's own name. */
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    size_t base_len = strlen(base);
    if (base_len <= 5 || strcmp(base + base_len - 5, ".lean") != 0) return -1;
    char *module = strndup(base, base_len - 5);
    for (size_t k = 0; k < header->parsed; k++)
        if (text[k] != '\n') text[k] = ' ';
    if (memory > 0) _ZN4lean23set_max_memory_megabyteEj((unsigned)memory);
    lobj *env = l_Lean_Environment_setMainModule(keep(header->env), l_Lean_Name_mkStr1(lean_mk_string(module)));
    /*
     * The file's name in the messages, as Lean's command line gives it: "some <path>", made here as a
     * persistent object (reference count 0: Lean never counts, frees or writes it).
     */
    static struct {
        lobj header;
        lobj *value;
    } file_name = {{0, sizeof file_name, 1, 1}, NULL};
    file_name.value = lean_mk_string(file);
    /* As Lean's command line elaborates a file: its snapshots keep only what the command line reports. */
    lobj *options = l_Lean_Options_setBool(keep(l_Lean_Options_empty),
                                           l_Lean_Name_mkStr2(lean_mk_string("internal"), lean_mk_string("cmdlineSnapshots")), 1);
    lobj *result = l_Lean_Elab_process(lean_mk_string(text), env, options, &file_name.header);
    if (tag_of(result) != 0) {
        fprintf(stderr, "%s\n", cstr(lean_io_error_to_string(keep(field(result, 0)))));
        return 1;
    }
    lobj *pair = field(result, 0);
    lobj *messages = field(pair, 1);
    for (lobj *list = l_Lean_MessageLog_toList(keep(messages)); !is_scalar(list); list = field(list, 1))
        printf("%s\n", cstr(l_Lean_Json_compress(l_Lean_Message_toJson(keep(field(list, 0))))));
    fflush(stdout);
    if (l_Lean_MessageLog_hasErrors(keep(messages))) return 1;
    lobj *written = l_Lean_writeModule(keep(field(pair, 0)), lean_mk_string(output), 0);
    if (tag_of(written) != 0) {
        fprintf(stderr, "%s\n", cstr(lean_io_error_to_string(keep(field(written, 0)))));
        return 1;
    }
    return 0;
}

/* ---- the compile server ---- */

static int child_signal[2];

/* Whether this server is the trusted one (--trusted): it is given no candidate's text to compile. */
static int trusted_server;

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

/* Splits a request line into its tab-separated fields, in place; how many. */
static int split_fields(char *line, char **fields, int cap) {
    int count = 0;
    for (char *p = line; count < cap;) {
        fields[count++] = p;
        char *tab = strchr(p, '\t');
        if (!tab) break;
        *tab = 0;
        p = tab + 1;
    }
    return count;
}

/*
 * The spare: a child forked ahead of the next request (a fork of the server is most of a small request's start),
 * waiting on a pipe of its own for the request line, which it then runs as a child forked for it would. It is
 * used only if no header was imported since it was forked (header_count then, spare_headers), since a child
 * elaborates on the imports it inherited; otherwise it is killed and a child is forked for the request.
 */
static pid_t spare_pid;
static int spare_fd = -1;
static int spare_headers;

/*
 * Each child's "done" pipe: a candidate's compile writes its exit code there (one byte) once its output is
 * written, and the server then kills the child's process group and answers for it, without waiting for the
 * exit (a fork's exit unmaps the server's memory it shares: about 3 ms, most of a small compile's end). The
 * candidate's code ran in that child, so the byte may come early or lie: the server kills the group before it
 * answers, so nothing of the child's runs once its compile is said to have ended, and the replay reads its own
 * copy of the module (replay_module), so nothing left running elsewhere can change what it reads; what a lie
 * earns is the verdict of the module as it lay there, which the candidate could have written anyway. A pipe is
 * the child's own (never another child's), so no child can answer for another. The server holds the read ends
 * (done_pipes; the spare's in spare_done); a child holds its own write end (child_done) and none of the others.
 */
typedef struct {
    pid_t pid;
    int fd;
} done_pipe;
static done_pipe *done_pipes;
static size_t done_count, done_cap;
static int spare_done = -1;
static int child_done = -1;

static void watch_done(pid_t pid, int fd) {
    if (fd < 0) return;
    if (done_count == done_cap) done_pipes = realloc(done_pipes, (done_cap = done_cap * 2 + 16) * sizeof(done_pipe));
    done_pipes[done_count++] = (done_pipe){pid, fd};
}

static void unwatch_done(pid_t pid) {
    for (size_t k = 0; k < done_count; k++)
        if (done_pipes[k].pid == pid) {
            close(done_pipes[k].fd);
            done_pipes[k] = done_pipes[--done_count];
            return;
        }
}

/* The children whose end the server has answered from their done pipe: their reap says nothing more. */
static pid_t *answered;
static size_t answered_count, answered_cap;

static int take_answered(pid_t pid) {
    for (size_t k = 0; k < answered_count; k++)
        if (answered[k] == pid) {
            answered[k] = answered[--answered_count];
            return 1;
        }
    return 0;
}

/*
 * What every child does first: it never outlives the server (the gate stopped it, or it died: the kernel
 * kills it then), it leads a session of its own, and it holds none of the server's descriptors but its answer
 * pipe (fd 1, until it confines itself) and its requests (fd 0, which it never reads): not the wake-up pipe,
 * and not the spare's request pipe, through which it could otherwise hand the spare a request of its own.
 */
static void become_child(pid_t server) {
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (getppid() != server) _exit(125);
    setsid();
    signal(SIGCHLD, SIG_DFL);
    close(child_signal[0]);
    close(child_signal[1]);
    if (spare_fd >= 0) close(spare_fd);
    if (spare_done >= 0) close(spare_done);
    for (size_t k = 0; k < done_count; k++) close(done_pipes[k].fd);
    done_count = 0;
}

/*
 * The end of a child: its output flushed, then its exit code said on its done pipe (a candidate's compile), or,
 * where it holds the answer pipe (answer >= 0: it ran no candidate's code), its exit said there in one write of
 * under PIPE_BUF bytes, whole between the server's own lines (the server's line for the pid, once it has reaped
 * it, then finds nothing to answer); then the exit.
 */
static void answer_then_exit(int answer, int code) {
    fflush(NULL);
    if (child_done >= 0) {
        unsigned char byte = (unsigned char)code;
        if (write(child_done, &byte, 1) != 1) { /* the server's reap still answers */ }
    }
    if (answer >= 0) {
        char said[64];
        int length = snprintf(said, sizeof said, "exited %d %d\n", (int)getpid(), code);
        if (write(answer, said, (size_t)length) != length) { /* the server's line still comes */ }
    }
    _exit(code);
}

/* Copies a file (the compiled module, into the replay's own folder); 0 on failure, errno set. */
static int copy_file(const char *from, const char *to) {
    int in = open(from, O_RDONLY);
    if (in < 0) return 0;
    int out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (out < 0) {
        close(in);
        return 0;
    }
    char buffer[1 << 16];
    int ok = 1;
    for (;;) {
        ssize_t got = read(in, buffer, sizeof buffer);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) ok = 0;
        if (got <= 0) break;
        for (ssize_t at = 0; ok && at < got;) {
            ssize_t put = write(out, buffer + at, (size_t)(got - at));
            if (put < 0 && errno == EINTR) continue;
            if (put <= 0) ok = 0;
            else at += put;
        }
        if (!ok) break;
    }
    int saved = errno;
    close(in);
    if (close(out) != 0) ok = 0;
    errno = saved;
    return ok;
}

/* A request, in the child that runs it (never returns). op: where its command begins, after any header. */
static void run_request(char **fields, int count, header_env *header, int op) {
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
    /*
     * A replay runs no candidate's code, nor does any child of the trusted server (the statements' references,
     * the headers alone: the workspace's text): such a child keeps the answer pipe, and says its exit there the
     * moment its output is written, before its exit (a fork's exit unmaps the server's memory it shares: about
     * as long as a small replay). Any other child closes it below, before it runs anything of the request's.
     */
    int replay = strcmp(fields[op], "--replay") == 0 && count >= op + 5;
    int answer = replay || trusted_server ? dup(1) : -1;
    if (answer >= 0 && child_done >= 0) {
        close(child_done);
        child_done = -1;
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
    if (strcmp(fields[op], "--probe") == 0) _exit(probe(fields + op + 1, count - op - 1));
    /*
     * One Lean worker, as lean -j1 runs: a replay or a check document is small, and each thread is a start. The
     * server set the search path, and ended Lean's initialization, before it forked.
     */
    if (replay) {
        /*
         * The replay reads its own copy of the compiled module, in its own folder, which no candidate's process
         * can write: whatever a candidate's process still running does to the module from now on, what the
         * replay checks is what it copied. (The reference lies where no candidate compile can write.)
         */
        char copy[4096];
        snprintf(copy, sizeof copy, "%s/FimRlvrGateCheck.olean", fields[2]);
        if (!copy_file(fields[op + 1], copy)) {
            fprintf(stderr, "fimrlvr-replay: could not copy the compiled module %s into %s: %s\n", fields[op + 1], copy,
                    strerror(errno));
            answer_then_exit(answer, 3);
        }
        fields[op + 1] = copy;
        lean_init_task_manager_using(1);
        int code = replay_module(fields[op + 1], strcmp(fields[op + 2], "may-be-private") == 0, fields[op + 3],
                                 fields + op + 4, count - op - 4, header ? header->env : NULL);
        answer_then_exit(answer, code);
    }
    if (header) {
        lean_init_task_manager_using(1);
        int code = elaborate(header, fields + op, count - op);
        if (code >= 0) answer_then_exit(answer, code);
    }
    char *args[4096];
    int n = 0;
    args[n++] = "lean";
    for (int k = op; k < count; k++) args[n++] = fields[k];
    args[n] = NULL;
    answer_then_exit(answer, lean_main(n, args));
}

/* The request's header, when it has one: imported now (import) or only looked up (in a spare); the command's index. */
static int header_of(char **fields, int count, header_env **header, int import) {
    *header = NULL;
    if (count >= 8 && strcmp(fields[5], "--header") == 0) {
        *header = import ? header_for(fields[6]) : header_known(fields[6]);
        return 7;
    }
    return 5;
}

/* Forks the spare, if there is none. */
static void make_spare(void) {
    if (spare_pid > 0) return;
    int pipe_fds[2], done_fds[2];
    if (pipe(pipe_fds) < 0) return;
    if (pipe(done_fds) < 0) {
        close(pipe_fds[0]);
        close(pipe_fds[1]);
        return;
    }
    fflush(stdout);
    pid_t server = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        close(pipe_fds[1]);
        close(done_fds[0]);
        child_done = done_fds[1];
        become_child(server);
        size_t cap = 1 << 16, len = 0;
        char *line = malloc(cap);
        for (;;) {
            if (len + 1 >= cap) line = realloc(line, cap *= 2);
            ssize_t got = read(pipe_fds[0], line + len, cap - len - 1);
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) break;
            len += (size_t)got;
            if (memchr(line, '\n', len)) break;
        }
        close(pipe_fds[0]);
        line[len] = 0;
        char *end = strchr(line, '\n');
        if (!end) _exit(0); /* the server let it go unused */
        *end = 0;
        char *fields[4096];
        int count = split_fields(line, fields, 4096);
        header_env *header;
        int op = header_of(fields, count, &header, 0);
        run_request(fields, count, header, op);
    }
    close(pipe_fds[0]);
    close(done_fds[1]);
    if (pid < 0) {
        close(pipe_fds[1]);
        close(done_fds[0]);
        return;
    }
    spare_pid = pid;
    spare_fd = pipe_fds[1];
    spare_done = done_fds[0];
    spare_headers = header_count;
}

/* Lets the spare go (it was forked before the imports a request needs): killed, and reaped as any child. */
static void drop_spare(void) {
    if (spare_pid <= 0) return;
    close(spare_fd);
    spare_fd = -1;
    close(spare_done);
    spare_done = -1;
    kill(spare_pid, SIGKILL);
    spare_pid = 0;
}

/*
 * The requests to run when a compile exits with 0 ("--then": the replay of what it wrote), by the compile's pid:
 * started here, the moment the compile is reaped, without a round trip to the gate.
 */
typedef struct {
    pid_t pid;
    char *line;
} chained;
static chained *chains;
static size_t chain_count, chain_cap;

/* The request line held for a compile's pid, taken off the table (NULL: none). */
static char *take_chain(pid_t pid) {
    for (size_t k = 0; k < chain_count; k++)
        if (chains[k].pid == pid) {
            char *line = chains[k].line;
            chains[k] = chains[--chain_count];
            return line;
        }
    return NULL;
}

/*
 * "<id> <cpu> <dir> <out> <err> ... --then <id2> <dir2> <out2> <err2> <command>...": the line of the request to
 * run after the compile (the same CPU limit), or NULL; the compile's own fields end where "--then" stood.
 */
static char *chain_of(char **fields, int *count) {
    for (int k = 5; k < *count; k++)
        if (strcmp(fields[k], "--then") == 0) {
            if (*count - k - 1 < 5) return NULL;
            size_t len = strlen(fields[1]) + 2;
            for (int j = k + 1; j < *count; j++) len += strlen(fields[j]) + 1;
            char *line = malloc(len);
            char *at = line;
            at += sprintf(at, "%s\t%s", fields[k + 1], fields[1]);
            for (int j = k + 2; j < *count; j++) at += sprintf(at, "\t%s", fields[j]);
            *count = k;
            return line;
        }
    return NULL;
}

/* Runs one request in a child (the spare, or one forked for it); answers "started <id> <pid>". */
static void start_compile(char *line) {
    size_t line_len = strlen(line);
    char *whole = strdup(line);
    char *fields[4096];
    int count = split_fields(line, fields, 4096);
    if (count == 2 && strcmp(fields[0], "warm") == 0) {
        header_for(fields[1]);
        if (spare_pid > 0 && spare_headers != header_count) drop_spare();
        make_spare();
        fflush(stdout);
        free(whole);
        return;
    }
    if (count == 2 && strcmp(fields[0], "kill") == 0) {
        pid_t pid = (pid_t)atol(fields[1]);
        if (pid > 0 && is_live(pid)) kill(-pid, SIGKILL);
        free(whole);
        return;
    }
    if (count < 6) {
        printf("refused %s\n", fields[0]);
        fflush(stdout);
        free(whole);
        return;
    }
    char *then = chain_of(fields, &count);
    /*
     * "--header <hex of its text>" first: the document begins with that header, imported here (in the server,
     * which runs no candidate's code) once for every document that begins with it.
     */
    header_env *header;
    int op = header_of(fields, count, &header, 1);
    pid_t pid;
    int done = -1;
    if (spare_pid > 0 && spare_headers == header_count) {
        /* The spare takes the request (without what runs after it): the line, then its pipe closes. */
        if (then) {
            line_len = 0;
            for (int k = 0; k < count; k++) line_len += (size_t)sprintf(whole + line_len, "%s%s", k ? "\t" : "", fields[k]);
        }
        whole[line_len] = 0;
        int sent = 1;
        for (size_t at = 0; sent && at < line_len;) {
            ssize_t put = write(spare_fd, whole + at, line_len - at);
            if (put < 0 && errno == EINTR) continue;
            if (put <= 0) sent = 0;
            else at += (size_t)put;
        }
        if (sent && write(spare_fd, "\n", 1) != 1) sent = 0;
        pid = spare_pid;
        done = spare_done;
        close(spare_fd);
        spare_fd = -1;
        spare_done = -1;
        spare_pid = 0;
        if (!sent) {
            kill(pid, SIGKILL);
            pid = -1;
        }
    } else {
        drop_spare();
        int done_fds[2] = {-1, -1};
        if (pipe(done_fds) < 0) done_fds[0] = done_fds[1] = -1;
        fflush(stdout);
        pid_t server = getpid();
        pid = fork();
        if (pid == 0) {
            if (done_fds[0] >= 0) close(done_fds[0]);
            child_done = done_fds[1];
            become_child(server);
            run_request(fields, count, header, op);
        }
        if (done_fds[1] >= 0) close(done_fds[1]);
        done = done_fds[0];
    }
    free(whole);
    if (pid < 0 && done >= 0) close(done);
    if (pid < 0) {
        printf("refused %s\n", fields[0]);
        if (then) {
            printf("refused %s\n", strtok(then, "\t"));
            free(then);
        }
    } else {
        if (live_count == live_cap) live = realloc(live, (live_cap = live_cap * 2 + 16) * sizeof(pid_t));
        live[live_count++] = pid;
        watch_done(pid, done);
        if (then) {
            if (chain_count == chain_cap) chains = realloc(chains, (chain_cap = chain_cap * 2 + 8) * sizeof(chained));
            chains[chain_count++] = (chained){pid, then};
        }
        printf("started %s %d\n", fields[0], (int)pid);
    }
    fflush(stdout);
    /* The next request's child, forked now, while this one runs. */
    make_spare();
}

/*
 * A child said on its done pipe that it has ended with its code: its process group is killed (nothing of it runs
 * from now on), its end answered, and what runs after it started as after its reap.
 */
static void report_done(pid_t pid, int code) {
    if (!is_live(pid)) return;
    kill(-pid, SIGKILL);
    if (answered_count == answered_cap) answered = realloc(answered, (answered_cap = answered_cap * 2 + 16) * sizeof(pid_t));
    answered[answered_count++] = pid;
    printf("exited %d %d\n", (int)pid, code);
    char *then = take_chain(pid);
    if (then && code == 0)
        start_compile(then);
    else if (then)
        printf("refused %s\n", strtok(then, "\t"));
    free(then);
    fflush(stdout);
}

/* The done pipes that have something to say: a byte (the child's exit code) or their end (the child exited). */
static void read_done(struct pollfd *fds, size_t count) {
    for (size_t k = 0; k < count; k++) {
        if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        pid_t pid = 0;
        for (size_t j = 0; j < done_count; j++)
            if (done_pipes[j].fd == fds[k].fd) pid = done_pipes[j].pid;
        if (pid == 0) continue;
        unsigned char byte;
        ssize_t got = read(fds[k].fd, &byte, 1);
        if (got < 0 && errno == EINTR) continue;
        unwatch_done(pid);
        if (got == 1) report_done(pid, byte);
    }
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
        unwatch_done(pid);
        if (take_answered(pid)) continue; /* said already, from its done pipe */
        if (WIFEXITED(status))
            printf("exited %d %d\n", (int)pid, WEXITSTATUS(status));
        else if (WIFSIGNALED(status))
            printf("signalled %d %d\n", (int)pid, WTERMSIG(status));
        /* What runs after a compile runs only after one that succeeded, and is refused otherwise. */
        char *then = take_chain(pid);
        if (then && WIFEXITED(status) && WEXITSTATUS(status) == 0)
            start_compile(then);
        else if (then)
            printf("refused %s\n", strtok(then, "\t"));
        free(then);
    }
    fflush(stdout);
}

static int compile_server(int trusted) {
    trusted_server = trusted;
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
    /* Where the headers' modules are found (LEAN_PATH), as each child's Lean would set it. */
    const char *sysroot = getenv("FIMRLVR_LEAN_SYSROOT");
    io_value(l_Lean_initSearchPath(lean_mk_string(sysroot ? sysroot : "/nonexistent"), box(0)),
             "setting the search path from LEAN_PATH");
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
    make_spare();
    size_t cap = 1 << 16, len = 0;
    char *buffer = malloc(cap);
    struct pollfd *fds = NULL;
    size_t fds_cap = 0;
    for (;;) {
        if (fds_cap < done_count + 2) fds = realloc(fds, (fds_cap = done_count + 18) * sizeof *fds);
        fds[0] = (struct pollfd){0, POLLIN, 0};
        fds[1] = (struct pollfd){child_signal[0], POLLIN, 0};
        size_t watched = done_count;
        for (size_t k = 0; k < watched; k++) fds[2 + k] = (struct pollfd){done_pipes[k].fd, POLLIN, 0};
        if (poll(fds, (nfds_t)(2 + watched), -1) < 0) {
            if (errno == EINTR) continue;
            return 3;
        }
        /* A child's done byte before its reap: the reap of a child answered already says nothing more. */
        read_done(fds + 2, watched);
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

`;
