/**
 * The C source of how a child of the embedded gate's compile server confines itself before it runs anything of
 * its request (Landlock: it may write beneath its request's folder alone, has no TCP, and cannot signal, trace or
 * open the descriptors of a process outside its own domain), and of the probe that tries, confined, every way of
 * writing and of reaching the server (the gate's tests show the confinement with it). Part of the gate's native
 * tool (nativeReplaySource.ts assembles the program; compileServerSource.ts calls confine and probe). Our own
 * text, written from the kernel's documented Landlock ABI (server/landlockC.ts); it stands in a raw template
 * literal, so it holds no backquote and no dollar-brace but the one that brings in Landlock's definitions.
 */
import { LANDLOCK_C_DEFINITIONS } from "../server/landlockC";

export const CHILD_CONFINEMENT_C = String.raw`/* ---- confinement (Landlock) ---- */

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

`;
