/*
 * The store a unit test runs against: SQLite in a file of the test's directory, or, when the pg
 * fixture has started a server (GP_TEST_PG_URL_FILE names the file with its URL, as for
 * test_store_pg), a PostgreSQL database of the test's own on that server. The tests that run on
 * both open the store by its URL (gp_store_open_url) and reset it between runs with
 * gp_testdb_reset: an empty SQLite file, or the database dropped and created again.
 *
 * Header-only (static functions): each test program includes it once.
 */
#ifndef GP_TESTS_TESTDB_H
#define GP_TESTS_TESTDB_H

#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct gp_testdb {
    int pg;           /* PostgreSQL: the fixture's server */
    char path[320];   /* SQLite: the file */
    char pgbase[256]; /* PostgreSQL: the server's URL, without a database */
    char pgdb[64];    /* PostgreSQL: this test's database */
    char url[640];    /* what the store opens */
} gp_testdb;

static void quiet(void *arg, const char *message)
{
    (void)arg, (void)message;
}

/* Runs sql on database db of the fixture's server; 0, or -1 with PostgreSQL's message in err. */
static int gp_testdb_exec(const gp_testdb *t, const char *db, const char *sql, char *err,
                          size_t cap)
{
    char url[512];
    snprintf(url, sizeof(url), "%s/%s", t->pgbase, db);
    PGconn *c = PQconnectdb(url);
    PQsetNoticeProcessor(c, quiet, NULL); /* "does not exist, skipping" */
    PGresult *r = PQexec(c, sql);
    int ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;
    if (err) {
        snprintf(err, cap, "%s", ok ? "" : PQresultErrorMessage(r));
    }
    PQclear(r);
    PQfinish(c);
    return ok ? 0 : -1;
}

/* An empty store: the SQLite file and its WAL removed, or the database dropped and created. */
static int gp_testdb_reset(gp_testdb *t, char *err, size_t cap)
{
    if (!t->pg) {
        char p[340];
        unlink(t->path);
        snprintf(p, sizeof(p), "%s-wal", t->path);
        unlink(p);
        snprintf(p, sizeof(p), "%s-shm", t->path);
        unlink(p);
        return 0;
    }
    char sql[128];
    snprintf(sql, sizeof(sql), "DROP DATABASE IF EXISTS %s WITH (FORCE)", t->pgdb);
    if (gp_testdb_exec(t, "postgres", sql, err, cap) < 0) {
        return -1;
    }
    snprintf(sql, sizeof(sql), "CREATE DATABASE %s", t->pgdb);
    return gp_testdb_exec(t, "postgres", sql, err, cap);
}

/* Chooses the store for a test whose files live in dir: PostgreSQL when GP_TEST_PG_URL_FILE is
 * set (a new empty database), else sqlite:dir/file. 0, or -1 with err. */
static int gp_testdb_init(gp_testdb *t, const char *dir, const char *file, char *err, size_t cap)
{
    static int serial;
    memset(t, 0, sizeof(*t));
    snprintf(t->path, sizeof(t->path), "%s/%s", dir, file);
    snprintf(t->url, sizeof(t->url), "sqlite:%s", t->path);
    const char *urlfile = getenv("GP_TEST_PG_URL_FILE");
    if (!urlfile) {
        return 0;
    }
    FILE *uf = fopen(urlfile, "r");
    if (!uf || !fgets(t->pgbase, sizeof(t->pgbase), uf)) {
        snprintf(err, cap, "%s: no PostgreSQL URL (is the pg fixture running?)", urlfile);
        if (uf) {
            fclose(uf);
        }
        return -1;
    }
    fclose(uf);
    t->pgbase[strcspn(t->pgbase, "\n")] = '\0';
    t->pg = 1;
    snprintf(t->pgdb, sizeof(t->pgdb), "gp_f_%d_%d", (int)getpid(), ++serial);
    snprintf(t->url, sizeof(t->url), "%s/%s", t->pgbase, t->pgdb);
    return gp_testdb_reset(t, err, cap);
}

/* Drops the test's database (nothing for SQLite: the test removes its directory). */
static void gp_testdb_fini(gp_testdb *t)
{
    if (t->pg) {
        char sql[128];
        snprintf(sql, sizeof(sql), "DROP DATABASE IF EXISTS %s WITH (FORCE)", t->pgdb);
        gp_testdb_exec(t, "postgres", sql, NULL, 0);
    }
}

#endif
