/**
 * Landlock's user-space ABI as C definitions, shared by the two C programs the verifier builds with `cc`: the
 * kernel gate's native replay tool (verify/nativeReplaySource.ts), whose compile server (verify/compileServerSource.ts) confines each child,
 * and the file-worker launcher (strays.ts). Written from the kernel's documentation, one copy for both.
 */
export const LANDLOCK_C_DEFINITIONS = String.raw`/*
 * Landlock's system calls and structures, from the kernel's documented user-space ABI
 * (Documentation/userspace-api/landlock.rst): the numbers are the same on every architecture.
 */
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif
#ifndef SYS_landlock_add_rule
#define SYS_landlock_add_rule 445
#endif
#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif
#define FIM_LANDLOCK_CREATE_RULESET_VERSION 1u
#define FIM_LANDLOCK_RULE_PATH_BENEATH 1
/* The file-system rights that write: everything but executing, reading files and reading folders. */
#define FIM_FS_WRITE_FILE (1ull << 1)
#define FIM_FS_WRITES                                                                                          \
    (FIM_FS_WRITE_FILE | (1ull << 4) /* remove dir */ | (1ull << 5) /* remove file */ | (1ull << 6) /* char */  \
     | (1ull << 7) /* dir */ | (1ull << 8) /* regular */ | (1ull << 9) /* socket */ | (1ull << 10) /* fifo */   \
     | (1ull << 11) /* block */ | (1ull << 12) /* symlink */ | (1ull << 13) /* refer */ | FIM_FS_TRUNCATE)
#define FIM_FS_TRUNCATE (1ull << 14)
#define FIM_NET_TCP ((1ull << 0) /* bind */ | (1ull << 1) /* connect */)
#define FIM_SCOPES ((1ull << 0) /* abstract unix sockets */ | (1ull << 1) /* signals */)
/* The least ABI that confines all of the above: signals and abstract sockets are scoped from ABI 6 on. */
#define FIM_LANDLOCK_MIN_ABI 6

struct fim_ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
};

struct fim_path_beneath_attr {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));
`;
