/* Logging: one line per event on stderr, `2026-11-21T12:00:00.123Z level=info msg="..." k=v`,
 * filtered by a process-wide level. Thread-safe: each line is one write(2). */
#ifndef SPAA_SERVER_LOG_H
#define SPAA_SERVER_LOG_H

#include "config/config.h"

/* Where lines go: `path` opened for appending (NULL: stderr), as text lines or, json 1, one
 * JSON object per line ({"time","level","msg", then each key=value as a string member}).
 * Called again (SIGHUP), it reopens the file: a rotated log goes on in a new file. 0, or -1
 * with errno set (lines keep going where they went). */
int spaa_log_open(const char *path, int json);

/* A text line's key=value fields as JSON members, for tests: the JSON line of `line` (as
 * spaa_log_format made it) into out (size n); its length. */
size_t spaa_log_json_line(char *out, size_t n, const char *line);

/* Lines below `level` are dropped (default SPAA_LOG_INFO). */
void spaa_log_set_level(enum spaa_log_level level);
/* 1 when a line at `level` would be written. */
int spaa_log_enabled(enum spaa_log_level level);

/* Write one line: time, level, msg (quoted and escaped), then `kv_fmt` formatted with
 * printf rules (may be NULL), e.g. spaa_log(SPAA_LOG_INFO, "listening", "addr=%s:%u", h, p).
 * String values that may hold spaces should be put inside quotes by the caller ("path=\"%s\"");
 * a value a client chose (a service name, an error quoting the input) goes through
 * spaa_log_q first, so that its quotes cannot end the value and start fields of its own;
 * control characters anywhere are escaped so that one event stays one line (\n, \r, \t, other
 * bytes below 0x20 and 0x7f as \xNN), and so is every byte that is not part of a valid UTF-8
 * sequence (\xNN): a line is always valid UTF-8, in text and in JSON (where the same \xNN
 * shows up as the string "\\xNN"). Lines longer than 4 KiB are cut (still valid UTF-8).
 * Never fails. */
void spaa_log(enum spaa_log_level level, const char *msg, const char *kv_fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The same, written whatever the level filter says: for the few lines an operator always
 * needs (the "listening on ADDR:PORT" line). */
void spaa_log_always(enum spaa_log_level level, const char *msg, const char *kv_fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* s (NULL: "") with '"' and '\' written \" and \\ into buf (size n, cut at a whole
 * character), for a "%s" inside quotes in spaa_log's kv_fmt; returns buf. */
const char *spaa_log_q(char *buf, size_t n, const char *s);

/* Format the log line into `out` (size n) at unix time `ns` instead of writing it; returns
 * its length (without NUL). For tests. */
size_t spaa_log_format(char *out, size_t n, long long ns, enum spaa_log_level level,
                       const char *msg, const char *kv);

#endif
