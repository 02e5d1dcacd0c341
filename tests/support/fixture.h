/* What tests and benchmarks share to find their inputs: tests/data/ files, the shared
 * fixtures folder (../shared/fixtures, or $SPAA_SHARED/fixtures), and reading a file whole. */
#ifndef SPAA_TESTS_FIXTURE_H
#define SPAA_TESTS_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

/* The exit code ctest counts as "skipped" (SKIP_RETURN_CODE in tests/CMakeLists.txt). */
#define SPAA_TEST_SKIP 77

/* The whole file at `path`, malloc'd (free() it) with a NUL after the last byte that *len
 * does not count; NULL when it cannot be opened or read (errno says why). len may be NULL. */
uint8_t *spaa_test_read_file(const char *path, size_t *len);

/* The shared folder: $SPAA_SHARED when set, else ../shared beside the source tree; NULL
 * when that folder does not exist (tests then skip with a message). */
const char *spaa_test_shared(void);

/* shared/fixtures/<rel> into out; 0, or -1 when there is no shared folder or the path is
 * longer than cap. */
int spaa_test_fixture_path(char *out, size_t cap, const char *rel);

/* The bytes of shared/fixtures/<rel> as spaa_test_read_file; NULL when there is no shared
 * folder (silently: see spaa_test_have_fixtures) or when the file cannot be read (then a
 * line on stderr names the file and the reason). */
uint8_t *spaa_test_fixture(const char *rel, size_t *len);

/* spaa_test_fixture of shared/fixtures/<dir>/<name>: for tests whose inputs all live in
 * one folder. */
uint8_t *spaa_test_fixture_in(const char *dir, const char *name, size_t *len);

/* 1 when shared/fixtures/<dir> is a folder. Otherwise 0, and when `who` is not NULL a line
 * on stderr says that `who` is skipped and which folder is missing. */
int spaa_test_have_fixtures(const char *dir, const char *who);

/* tests/data/<name> of this source tree into out (truncated to cap). */
void spaa_test_data_path(char *out, size_t cap, const char *name);

/* <rel> inside this source tree into out (truncated to cap): for inputs that live beside
 * the code, such as the Go program under tests/e2e/go. */
void spaa_test_source_path(char *out, size_t cap, const char *rel);

/* The bytes of tests/data/<name> as spaa_test_read_file; NULL (and a line on stderr naming
 * the file) when it cannot be read. */
uint8_t *spaa_test_data(const char *name, size_t *len);

#endif
