/* What tests and benchmarks share to find their inputs: tests/data/ files, the shared
 * fixtures folder (../shared/fixtures, or $SPAA_SHARED/fixtures), and reading a file whole. */
#ifndef SPAA_TESTS_FIXTURE_H
#define SPAA_TESTS_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

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
 * folder or the file cannot be read. */
uint8_t *spaa_test_fixture(const char *rel, size_t *len);

/* tests/data/<name> of this source tree into out (truncated to cap). */
void spaa_test_data_path(char *out, size_t cap, const char *name);

#endif
