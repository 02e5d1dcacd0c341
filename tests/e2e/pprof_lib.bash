# Helpers for the pprof end-to-end tests (sourced after lib.bash; not a test itself).
#   pprof_expected FILE        per-type totals of a pprof file, "type=N" lines sorted, zero
#                              totals left out: from `go tool pprof -raw` when Go is installed
#                              (an oracle independent of our codec), else from
#                              `spaa-relay convert --from pprof`
#   spaa_totals                the same from SPAA NDJSON on stdin (stack weights per metric)
#   meta_totals JSON           the same from a profile's metadata ("events":[{"totals"}]: a
#                              pprof has one event, its sample types are metrics of it)
#   push_readback FILE ID      compare a stored profile's metadata and SPAA totals with FILE's,
#                              and run `spaa-relay validate -` on its SPAA
command -v jq >/dev/null || fail "jq is not installed (scripts/install-deps.sh installs it)"

go_totals() {
  go tool pprof -raw "$1" 2>/dev/null | awk '
    /^Samples:/ { s = 1; getline; n = split($0, t, " ")
                  for (i = 1; i <= n; i++) { sub(/\/.*/, "", t[i]); name[i] = t[i] }; next }
    /^Locations/ { s = 0 }
    s && /^ *-?[0-9]+( +-?[0-9]+)*:/ { l = $0; sub(/:.*/, "", l); m = split(l, v, " ")
                                       for (i = 1; i <= m; i++) tot[i] += v[i] }
    END { for (i = 1; i <= n; i++) if (tot[i] != 0) printf "%s=%.0f\n", name[i], tot[i] }' |
    sort
}

spaa_totals() {
  jq -r 'select(.type == "stack") | .weights[] | "\(.metric) \(.value)"' |
    awk '{ t[$1] += $2 } END { for (k in t) if (t[k] != 0) printf "%s=%.0f\n", k, t[k] }' | sort
}

meta_totals() {
  printf '%s' "$1" | jq -r '.events[] | .totals | to_entries[] | "\(.key) \(.value)"' |
    awk '{ t[$1] += $2 } END { for (k in t) if (t[k] != 0) printf "%s=%.0f\n", k, t[k] }' | sort
}

PPROF_ORACLE=""
pprof_expected() {
  local out
  if command -v go >/dev/null; then
    PPROF_ORACLE="go tool pprof -raw"
    go_totals "$1"
    return
  fi
  PPROF_ORACLE="spaa-relay convert"
  out=$("$SPAA_BIN" convert --from pprof "$1") || fail "spaa-relay convert --from pprof $1 failed"
  printf '%s\n' "$out" | spaa_totals
}

# validate_spaa FILE: `spaa-relay validate -` on a SPAA file must exit 0.
validate_spaa() {
  local out rc=0
  out=$("$SPAA_BIN" validate - <"$1" 2>&1) || rc=$?
  [[ $rc -eq 0 ]] || fail "spaa-relay validate - on $2: exit $rc: $out"
}

# push_readback FILE ID WHAT: the stored profile ID has FILE's per-type totals, in its
# metadata and in its SPAA, and that SPAA validates.
push_readback() {
  local file=$1 id=$2 what=$3 want got
  want=$(pprof_expected "$file")
  http GET "/api/v1/profiles/$id"
  assert_eq 200 "$HTTP_CODE" "metadata of $what"
  got=$(meta_totals "$HTTP_BODY")
  assert_eq "$want" "$got" "metadata totals of $what vs $PPROF_ORACLE"
  # every sample type is a metric of the one event (docs/pprof-mapping.md)
  assert_eq 1 "$(printf '%s' "$HTTP_BODY" | jq '.events | length')" "events in the metadata of $what"
  http GET "/api/v1/profiles/$id/spaa"
  assert_eq 200 "$HTTP_CODE" "SPAA of $what"
  printf '%s\n' "$HTTP_BODY" >"$E2E_TMP/readback.spaa"
  got=$(spaa_totals <"$E2E_TMP/readback.spaa")
  assert_eq "$want" "$got" "SPAA totals of $what vs $PPROF_ORACLE"
  validate_spaa "$E2E_TMP/readback.spaa" "$what"
}

# The id of the only profile of a service (each push in these tests uses a new service).
only_id() {
  http GET "/api/v1/profiles?service=$1"
  assert_eq 200 "$HTTP_CODE" "list of service $1"
  assert_eq 1 "$(printf '%s' "$HTTP_BODY" | jq '.profiles | length')" "profiles of service $1"
  printf '%s' "$HTTP_BODY" | jq -r '.profiles[0].id'
}
