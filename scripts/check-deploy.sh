#!/usr/bin/env bash
# Static checks of the deployment files, for machines without docker (CI included):
#   docker/Dockerfile     every COPY source exists; HEALTHCHECK asks /readyz (not --version);
#                         the example config is COPYed and passed with --config; listeners on
#                         0.0.0.0 (HTTP and gRPC) and their ports EXPOSEd; non-root USER; the
#                         data directory is the VOLUME
#   docker/compose.yaml   parses (python3-yaml); the relay builds from the Dockerfile; its
#                         ports map EXPOSEd ports; its data is a declared named volume on the
#                         data directory; it sets keys or tokens (or allow_open), so it starts;
#                         bind-mounted sources exist
#   docker/compose.postgres.yaml   parses; a postgres service keeping its data in a declared
#                         named volume, with a pg_isready healthcheck; at least two relays built
#                         from the Dockerfile, each with SPAA_RELAY_STORE a postgres URI naming
#                         that service, its user and database, waiting for it to be healthy,
#                         setting keys or tokens, publishing 8080 on host ports of their own;
#                         the image installs libpq (build and runtime stages)
#   docker/*.service      systemd-analyze verify when present, and the hardening keys
# With SPAA_BIN (the built binary) also: `healthcheck --help` and the example config load.
# usage: scripts/check-deploy.sh [REPO_ROOT]     exit 0 all good, 1 with one line per problem
set -euo pipefail
ROOT=$(cd "${1:-$(dirname "$0")/..}" && pwd)
python3 -c 'import yaml' 2>/dev/null || { echo "check-deploy: python3-yaml is missing (scripts/install-deps.sh)" >&2; exit 1; }

status=0
python3 - "$ROOT" <<'PY' || status=1
import json, os, re, shlex, sys
import yaml

root = sys.argv[1]
problems = []
def bad(msg):
    problems.append(msg)

# ---- Dockerfile ---------------------------------------------------------------------------
dockerfile = os.path.join(root, "docker/Dockerfile")
lines, cur = [], ""
for raw in open(dockerfile, encoding="utf-8"):
    s = raw.rstrip("\n")
    if not cur and (not s.strip() or s.lstrip().startswith("#")):
        continue
    if s.endswith("\\"):
        cur += s[:-1] + " "
        continue
    lines.append(cur + s)
    cur = ""
instrs = []
for l in lines:
    word, _, rest = l.strip().partition(" ")
    instrs.append((word.upper(), rest.strip()))

def args_of(rest):
    rest = rest.strip()
    if rest.startswith("["):
        try:
            return json.loads(rest)
        except ValueError:
            bad(f"Dockerfile: bad JSON array: {rest}")
            return []
    return shlex.split(rest)

stages = [i for i, (w, _) in enumerate(instrs) if w == "FROM"]
final = instrs[stages[-1]:] if stages else instrs
env, exposed, copies_final, volume, user = {}, set(), {}, [], None
for idx, (w, rest) in enumerate(instrs):
    if w == "COPY":
        a = args_of(rest)
        flags = [x for x in a if x.startswith("--")]
        paths = [x for x in a if not x.startswith("--")]
        if len(paths) < 2:
            bad(f"Dockerfile: COPY needs a source and a destination: {rest}")
            continue
        if not any(f.startswith("--from=") for f in flags):
            for src in paths[:-1]:
                if not os.path.exists(os.path.join(root, src)):
                    bad(f"Dockerfile: COPY source '{src}' does not exist in the build context")
        if idx >= (stages[-1] if stages else 0):
            copies_final[paths[-1]] = paths[:-1]
for w, rest in final:
    if w == "ENV":
        for tok in shlex.split(rest):
            k, eq, v = tok.partition("=")
            if eq:
                env[k] = v
    elif w == "EXPOSE":
        for p in rest.split():
            exposed.add(int(p.split("/")[0]))
    elif w == "VOLUME":
        volume += args_of(rest)
    elif w == "USER":
        user = rest.split(":")[0]

health = [rest for w, rest in final if w == "HEALTHCHECK"]
if len(health) != 1:
    bad("Dockerfile: the final stage needs one HEALTHCHECK")
else:
    h = health[0]
    if "/readyz" not in h:
        bad("Dockerfile: HEALTHCHECK does not ask /readyz")
    if "--version" in h:
        bad("Dockerfile: HEALTHCHECK runs --version, which passes while the server is dead")
    m = re.search(r"https?://[^\s\"']+", h)
    if m and m.group(0).split("/")[2].split(":")[-1] not in {str(p) for p in exposed}:
        bad(f"Dockerfile: HEALTHCHECK URL {m.group(0)} is not on an EXPOSEd port")

cmd = [args_of(rest) for w, rest in final if w == "CMD"]
entry = [args_of(rest) for w, rest in final if w == "ENTRYPOINT"]
argv = (entry[-1] if entry else []) + (cmd[-1] if cmd else [])
if "--config" not in argv or argv.index("--config") + 1 >= len(argv):
    bad("Dockerfile: the server is not started with --config FILE")
else:
    conf = argv[argv.index("--config") + 1]
    if conf not in copies_final:
        bad(f"Dockerfile: --config {conf} is not a COPY destination of the final stage")
    elif copies_final[conf] != ["config/example.conf"]:
        bad(f"Dockerfile: {conf} is not the example config (config/example.conf)")
if "serve" not in argv:
    bad("Dockerfile: ENTRYPOINT/CMD does not run `serve`")

def host_port(v, what):
    m = re.fullmatch(r"(.*):(\d+)", v or "")
    if not m:
        bad(f"Dockerfile: {what} is '{v}', expected ADDR:PORT")
        return None, None
    return m.group(1), int(m.group(2))

for var, want_port in (("SPAA_RELAY_LISTEN", 8080), ("SPAA_RELAY_GRPC_LISTEN", 4317)):
    host, port = host_port(env.get(var), var)
    if host is None:
        continue
    if host not in ("0.0.0.0", "", "*", "[::]"):
        bad(f"Dockerfile: {var}={env.get(var)} does not listen on every interface")
    if port not in exposed:
        bad(f"Dockerfile: {var} port {port} is not EXPOSEd ({sorted(exposed)})")
data_dir = env.get("SPAA_RELAY_DATA_DIR")
if not data_dir:
    bad("Dockerfile: SPAA_RELAY_DATA_DIR is not set")
elif data_dir not in volume:
    bad(f"Dockerfile: the data directory {data_dir} is not a VOLUME ({volume})")
if not user or user in ("root", "0"):
    bad("Dockerfile: the final stage runs as root (no USER)")

# ---- compose.yaml -------------------------------------------------------------------------
compose_path = os.path.join(root, "docker/compose.yaml")
compose_dir = os.path.dirname(compose_path)
try:
    compose = yaml.safe_load(open(compose_path, encoding="utf-8"))
except yaml.YAMLError as e:
    bad(f"compose.yaml: does not parse: {e}")
    compose = None
if compose is not None:
    services = compose.get("services") or {}
    named = compose.get("volumes") or {}
    relay = services.get("relay")
    if not isinstance(relay, dict):
        bad("compose.yaml: no 'relay' service")
        relay = {}
    build = relay.get("build") or {}
    if isinstance(build, str):
        build = {"context": build}
    ctx = os.path.normpath(os.path.join(compose_dir, build.get("context", ".")))
    dfile = os.path.join(ctx, build.get("dockerfile", "Dockerfile"))
    if not relay.get("image") and not build:
        bad("compose.yaml: relay has neither build nor image")
    if build and os.path.realpath(dfile) != os.path.realpath(dockerfile):
        bad(f"compose.yaml: relay builds {dfile}, not docker/Dockerfile")
    if build and os.path.realpath(ctx) != os.path.realpath(root):
        bad(f"compose.yaml: relay's build context {ctx} is not the repository root")
    for p in relay.get("ports") or []:
        s = str(p)
        m = re.fullmatch(r"(?:([\d.]+|\[[0-9a-fA-F:]+\]):)?(\d+):(\d+)(?:/(tcp|udp))?", s)
        if not m:
            bad(f"compose.yaml: relay port '{s}' is not [IP:]HOST:CONTAINER")
            continue
        hp, cp = int(m.group(2)), int(m.group(3))
        if not (0 < hp < 65536) or cp not in exposed:
            bad(f"compose.yaml: relay port '{s}' maps a port the image does not EXPOSE")
    if 8080 not in [int(str(p).split(":")[-1].split("/")[0]) for p in relay.get("ports") or []
                    if str(p).split(":")[-1].split("/")[0].isdigit()]:
        bad("compose.yaml: relay does not publish the HTTP port 8080")
    data_mounts = []
    for svc_name, svc in services.items():
        for v in (svc or {}).get("volumes") or []:
            if isinstance(v, dict):
                src, dst = v.get("source", ""), v.get("target", "")
            else:
                parts = str(v).split(":")
                if len(parts) < 2:
                    bad(f"compose.yaml: {svc_name} volume '{v}' has no target")
                    continue
                src, dst = parts[0], parts[1]
            if src.startswith((".", "/", "~")):
                if not os.path.exists(os.path.join(compose_dir, src)):
                    bad(f"compose.yaml: {svc_name} mounts '{src}', which does not exist")
            elif src not in named:
                bad(f"compose.yaml: {svc_name} uses volume '{src}', not declared under volumes:")
            elif svc_name == "relay":
                data_mounts.append(dst)
    if data_dir and data_dir not in data_mounts:
        bad(f"compose.yaml: relay keeps no named volume on the data directory {data_dir}")
    renv = relay.get("environment") or {}
    if isinstance(renv, list):
        renv = dict(x.split("=", 1) for x in renv if "=" in x)
    access = ("SPAA_RELAY_SENTRY_KEYS", "SPAA_RELAY_INGEST_TOKENS", "SPAA_RELAY_READ_TOKENS")
    if not any(renv.get(k) for k in access) and \
            str(renv.get("SPAA_RELAY_ALLOW_OPEN", "")).lower() not in ("true", "yes", "on", "1"):
        bad("compose.yaml: relay sets no keys or tokens (nor SPAA_RELAY_ALLOW_OPEN): "
            "it would refuse to start on 0.0.0.0")
    for svc_name, svc in services.items():
        dep = (svc or {}).get("depends_on") or {}
        for target in (dep if isinstance(dep, (list, dict)) else []):
            if target not in services:
                bad(f"compose.yaml: {svc_name} depends on unknown service '{target}'")

# ---- compose.postgres.yaml: two relays on one PostgreSQL -----------------------------------
from urllib.parse import urlsplit

def stage_packages(instrs_of_stage):
    pk = set()
    for w, rest in instrs_of_stage:
        if w == "RUN" and "apt-get install" in rest:
            pk.update(t for t in re.split(r"[\s\\&|;]+", rest.split("apt-get install", 1)[1])
                      if t and not t.startswith("-"))
    return pk
build_stage = instrs[stages[0]:stages[-1]] if len(stages) > 1 else []
if build_stage and "libpq-dev" not in stage_packages(build_stage):
    bad("Dockerfile: the build stage does not install libpq-dev (the PostgreSQL backend)")
if "libpq5" not in stage_packages(final):
    bad("Dockerfile: the final stage does not install libpq5 (the PostgreSQL backend)")

def env_of(svc):
    e = (svc or {}).get("environment") or {}
    if isinstance(e, list):
        e = dict(x.split("=", 1) for x in e if "=" in x)
    return {k: str(v) for k, v in e.items()}

def unexpand(v):
    """${NAME:-default} -> default, as compose would expand it with NAME unset."""
    return re.sub(r"\$\{[A-Za-z_][A-Za-z0-9_]*(?::?-([^}]*))?\}", lambda m: m.group(1) or "", v)

access = ("SPAA_RELAY_SENTRY_KEYS", "SPAA_RELAY_INGEST_TOKENS", "SPAA_RELAY_READ_TOKENS")
pg_path = os.path.join(root, "docker/compose.postgres.yaml")
try:
    pgc = yaml.safe_load(open(pg_path, encoding="utf-8"))
except (OSError, yaml.YAMLError) as e:
    bad(f"compose.postgres.yaml: does not parse: {e}")
    pgc = None
if pgc is not None:
    services = pgc.get("services") or {}
    named = pgc.get("volumes") or {}
    pgs = {n: v for n, v in services.items() if str((v or {}).get("image", "")).startswith("postgres")}
    if len(pgs) != 1:
        bad("compose.postgres.yaml: needs exactly one service running a postgres image")
    pg_name, pg = next(iter(pgs.items())) if pgs else ("", {})
    penv = env_of(pg)
    mounts = [str(v).split(":") for v in (pg or {}).get("volumes") or []]
    if not any(len(m) >= 2 and m[0] in named and m[1] == "/var/lib/postgresql/data"
               for m in mounts):
        bad("compose.postgres.yaml: postgres keeps no declared named volume on "
            "/var/lib/postgresql/data")
    test = (pg or {}).get("healthcheck", {}).get("test")
    if "pg_isready" not in " ".join(test if isinstance(test, list) else [str(test)]):
        bad("compose.postgres.yaml: postgres has no pg_isready healthcheck")
    relays = {n: v for n, v in services.items() if "SPAA_RELAY_STORE" in env_of(v)}
    if len(relays) < 2:
        bad(f"compose.postgres.yaml: {len(relays)} relays set SPAA_RELAY_STORE, want 2 or more")
    host_ports = []
    for n, r in relays.items():
        renv = env_of(r)
        u = urlsplit(unexpand(renv["SPAA_RELAY_STORE"]))
        if u.scheme not in ("postgres", "postgresql"):
            bad(f"compose.postgres.yaml: {n}: SPAA_RELAY_STORE is not a postgres:// URI")
        if u.hostname != pg_name:
            bad(f"compose.postgres.yaml: {n}: the store's host '{u.hostname}' is not the "
                f"postgres service '{pg_name}'")
        if u.username != unexpand(penv.get("POSTGRES_USER", "postgres")) or \
                u.path.lstrip("/") != unexpand(penv.get("POSTGRES_DB", penv.get("POSTGRES_USER", "postgres"))):
            bad(f"compose.postgres.yaml: {n}: the store's user or database is not postgres's "
                "POSTGRES_USER / POSTGRES_DB")
        if u.password is not None and u.password != unexpand(penv.get("POSTGRES_PASSWORD", "")):
            bad(f"compose.postgres.yaml: {n}: the store's password is not POSTGRES_PASSWORD")
        b = r.get("build") or {}
        if isinstance(b, str):
            b = {"context": b}
        if not b or os.path.realpath(os.path.join(os.path.dirname(pg_path), b.get("context", "."),
                                                  b.get("dockerfile", "Dockerfile"))) != \
                os.path.realpath(dockerfile):
            bad(f"compose.postgres.yaml: {n} does not build docker/Dockerfile")
        dep = r.get("depends_on") or {}
        if not isinstance(dep, dict) or (dep.get(pg_name) or {}).get("condition") != "service_healthy":
            bad(f"compose.postgres.yaml: {n} does not wait for {pg_name or 'postgres'} to be healthy")
        if not any(renv.get(k) for k in access):
            bad(f"compose.postgres.yaml: {n} sets no keys or tokens: it would refuse to start")
        published = []
        for port in r.get("ports") or []:
            m = re.fullmatch(r"(?:([\d.]+|\[[0-9a-fA-F:]+\]):)?(\d+):(\d+)(?:/(tcp|udp))?", str(port))
            if not m or int(m.group(3)) not in exposed:
                bad(f"compose.postgres.yaml: {n} port '{port}' is not [IP:]HOST:CONTAINER on an "
                    "EXPOSEd port")
                continue
            host_ports.append(int(m.group(2)))
            published.append(int(m.group(3)))
        if 8080 not in published:
            bad(f"compose.postgres.yaml: {n} does not publish the HTTP port 8080")
    if len(host_ports) != len(set(host_ports)):
        bad(f"compose.postgres.yaml: relays publish the same host port twice ({host_ports})")
    for svc_name, svc in services.items():
        for v in (svc or {}).get("volumes") or []:
            src = str(v).split(":")[0]
            if not src.startswith((".", "/", "~")) and src not in named:
                bad(f"compose.postgres.yaml: {svc_name} uses volume '{src}', not declared")
        dep = (svc or {}).get("depends_on") or {}
        for target in (dep if isinstance(dep, (list, dict)) else []):
            if target not in services:
                bad(f"compose.postgres.yaml: {svc_name} depends on unknown service '{target}'")

# ---- systemd unit: the keys (systemd-analyze verify runs in the shell part) ---------------
unit_path = os.path.join(root, "docker/spaa-relay.service")
sections, section = {}, None
for n, raw in enumerate(open(unit_path, encoding="utf-8"), 1):
    s = raw.strip()
    if not s or s.startswith(("#", ";")):
        continue
    if s.startswith("[") and s.endswith("]"):
        section = s[1:-1]
        sections.setdefault(section, {})
        continue
    if section is None or "=" not in s:
        bad(f"spaa-relay.service:{n}: not a key=value line in a section: {s}")
        continue
    k, _, v = s.partition("=")
    sections[section].setdefault(k.strip(), []).append(v.strip())
svc = sections.get("Service", {})
for sec in ("Unit", "Service", "Install"):
    if sec not in sections:
        bad(f"spaa-relay.service: no [{sec}] section")
want = {"ProtectSystem": "strict", "NoNewPrivileges": "yes", "ProtectHome": "yes",
        "PrivateTmp": "yes", "KillSignal": "SIGTERM"}
for k, v in want.items():
    if svc.get(k, [None])[-1] != v:
        bad(f"spaa-relay.service: [Service] {k}={v} missing")
if not svc.get("ReadWritePaths") and not svc.get("StateDirectory"):
    bad("spaa-relay.service: no ReadWritePaths= or StateDirectory= (ProtectSystem=strict "
        "leaves nothing writable)")
if svc.get("DynamicUser", ["no"])[-1] != "yes" and not svc.get("User"):
    bad("spaa-relay.service: runs as root (no DynamicUser=yes or User=)")
exec_start = " ".join(svc.get("ExecStart", []))
if " serve" not in exec_start or "--config" not in exec_start:
    bad("spaa-relay.service: ExecStart does not run `serve --config FILE`")

for p in problems:
    print("check-deploy: " + p)
sys.exit(1 if problems else 0)
PY

# the systemd unit, with its ExecStart pointed at a binary that exists here
if command -v systemd-analyze >/dev/null 2>&1; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  sed "s#/usr/local/bin/spaa-relay#${SPAA_BIN:-/bin/true}#g" "$ROOT/docker/spaa-relay.service" \
    > "$tmp/spaa-relay.service"
  if ! out=$(systemd-analyze verify "$tmp/spaa-relay.service" 2>&1) || [ -n "$out" ]; then
    echo "check-deploy: systemd-analyze verify docker/spaa-relay.service: $out"
    status=1
  fi
else
  echo "check-deploy: systemd-analyze not found: the unit's keys were checked, not verified"
fi

# the example client is valid Python
python3 -m py_compile "$ROOT/docker/example-client/push_pprof.py" 2>/dev/null \
  || { echo "check-deploy: docker/example-client/push_pprof.py does not compile"; status=1; }

if [ -n "${SPAA_BIN:-}" ]; then
  "$SPAA_BIN" healthcheck --help >/dev/null \
    || { echo "check-deploy: '$SPAA_BIN healthcheck --help' failed (the HEALTHCHECK command)"; status=1; }
fi
[ $status -eq 0 ] && echo "check-deploy: ok"
exit $status
