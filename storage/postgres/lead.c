/* Retention leadership among the relays sharing one database: the relay whose own session
 * holds the session-level advisory lock PG_LOCK_LEAD leads. It keeps the lock while the
 * session lives; a relay that dies (even by SIGKILL) loses its session, PostgreSQL releases
 * the lock, and the next relay asking takes it. No lease to renew and no clock involved. */
#include <string.h>

#include "storage/postgres/pg_int.h"

/* Take the lock if no session holds it: 1 taken, 0 held elsewhere, or an error. */
static int try_take(struct storage__pg *s, struct spaa_err *err)
{
  struct pg__conn *c = &s->lead;
  struct pg__params p;
  PGresult *r;
  int rc;
  if ((!c->db || PQstatus(c->db) != CONNECTION_OK) &&
      (rc = pg__connect(c, s->conninfo, 0, NULL, err)))
    return rc;
  memset(&p, 0, sizeof(p));
  pg__p_int(&p, PG_LOCK_LEAD);
  if (!(r = pg__sql(c, "SELECT pg_try_advisory_lock($1::int8)", &p, err))) {
    rc = c->lost ? SPAA_E_BUSY : SPAA_E_STORE;
    if (c->lost)
      pg__disconnect(c);
    return rc;
  }
  s->leading = PQntuples(r) == 1 && pg__int(r, 0, 0) != 0; /* a bool: one byte */
  PQclear(r);
  return s->leading;
}

int pg__lead(struct storage__pg *s, struct spaa_err *err)
{
  PGresult *r;
  int rc, ready;
  pthread_mutex_lock(&s->mu);
  ready = s->db_ready && !s->stopping;
  if (!ready)
    pg__not_ready(s, err);
  pthread_mutex_unlock(&s->mu);
  pthread_mutex_lock(&s->lead_mu);
  if (!ready) {
    rc = SPAA_E_BUSY;
  } else if (s->leading && (r = pg__sql(&s->lead, "SELECT 1", NULL, NULL))) {
    /* the session is alive, so it still holds the lock */
    PQclear(r);
    rc = 1;
  } else {
    if (s->leading) { /* the session ended (a restart, a failover): the lock went with it */
      s->leading = 0;
      pg__disconnect(&s->lead);
    }
    rc = try_take(s, err);
  }
  pthread_mutex_unlock(&s->lead_mu);
  return rc;
}

void pg__lead_end(struct storage__pg *s)
{
  pthread_mutex_lock(&s->lead_mu);
  /* released now, not when the server gets round to ending the session: the next relay
   * asking takes the lead at once (a relay that dies still loses it with its session) */
  if (s->leading && s->lead.db && PQstatus(s->lead.db) == CONNECTION_OK) {
    PGresult *r = pg__sql(&s->lead, "SELECT pg_advisory_unlock_all()", NULL, NULL);
    if (r)
      PQclear(r);
  }
  pg__disconnect(&s->lead); /* the session's end releases the lock */
  storage__cache_free(&s->lead.cache);
  s->leading = 0;
  pthread_mutex_unlock(&s->lead_mu);
}
