# Helpers for the PostgreSQL end-to-end tests (sourced after lib.bash; not a test itself):
# the throwaway cluster (tests/support/pg.sh) and a small SPAA upload.
source "$(dirname "${BASH_SOURCE[0]}")/../support/pg.sh"

# A one-stack SPAA profile (checkout::charge <- main) into file $1.
shop_spaa() {
  cat >"$1" <<'SPAA'
{"type":"header","format":"spaa","version":"1.0","stack_id_mode":"local","source_tool":"perf","frame_order":"leaf_to_root","events":[{"name":"cycles","kind":"hardware","sampling":{"mode":"period","primary_metric":"period","sample_period":100000}}]}
{"type":"dso","id":1,"name":"/usr/bin/shop","build_id":"00112233445566778899aabbccddeeff"}
{"type":"frame","id":10,"func":"checkout::charge","dso":1,"kind":"user"}
{"type":"frame","id":11,"func":"main","dso":1,"kind":"user"}
{"type":"stack","id":"s1","frames":[10,11],"context":{"event":"cycles"},"weights":[{"metric":"period","value":3000000,"unit":"events"}]}
SPAA
}
