package guard

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestPostgresSubscribedTableRefused: a logical-replication subscription's
// apply worker fires row triggers only, never the statement triggers that
// log the guarded table's writes, so rows it replicates into a guarded
// table would be rejected for good. A table a subscription writes must be
// refused. The publisher is another database of the same cluster, which
// needs wal_level = logical (CI starts its cluster so; elsewhere the test
// skips without it, and fails under CI=true).
func TestPostgresSubscribedTableRefused(t *testing.T) {
	ctx := context.Background()
	db := pgDirect(t)
	var level string
	if err := db.QueryRow(ctx, `SHOW wal_level`).Scan(&level); err != nil {
		t.Fatal(err)
	}
	if level != "logical" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("wal_level is %s but CI=true: CI must start PostgreSQL with wal_level=logical", level)
		}
		t.Skipf("wal_level is %s; a publisher needs logical", level)
	}
	cfg, err := pgx.ParseConfig(os.Getenv(DSNEnv))
	if err != nil {
		t.Fatal(err)
	}
	const pubDB, table = "cacheguard_test_pub", "cacheguard_test_user.subscribed"
	dropPublisher(t, db, pubDB) // what an interrupted run left
	sqlExec(t, db, `CREATE DATABASE `+pubDB)
	pubCfg := cfg.Copy()
	pubCfg.Database = pubDB
	pub, err := pgx.ConnectConfig(ctx, pubCfg)
	if err != nil {
		t.Fatal(err)
	}
	create := `CREATE SCHEMA IF NOT EXISTS cacheguard_test_user; DROP TABLE IF EXISTS ` + table + `;
		CREATE TABLE ` + table + ` (k text PRIMARY KEY, v bytea NOT NULL)`
	sqlExec(t, pub, create)
	sqlExec(t, pub, `CREATE PUBLICATION cacheguard_test_pub FOR TABLE `+table)
	// The slot is made here: CREATE SUBSCRIPTION making it on its own
	// cluster would wait for itself.
	sqlExec(t, pub, `SELECT pg_create_logical_replication_slot('cacheguard_test_sub', 'pgoutput')`)
	pub.Close(ctx)
	t.Cleanup(func() {
		dropPublisher(t, db, pubDB)
		sqlExec(t, db, `DROP TABLE IF EXISTS `+table)
	})
	sqlExec(t, db, create)
	conninfo := fmt.Sprintf("host=%s port=%d user=%s dbname=%s", cfg.Host, cfg.Port, cfg.User, pubDB)
	sqlExec(t, db, `CREATE SUBSCRIPTION cacheguard_test_sub CONNECTION '`+conninfo+`' PUBLICATION cacheguard_test_pub
		WITH (create_slot = false, slot_name = 'cacheguard_test_sub', copy_data = false)`)

	p, err := OpenPostgres(ctx, os.Getenv(DSNEnv), PGOptions{Table: table})
	if err == nil {
		p.Close()
		t.Fatalf("a table that a subscription writes was accepted")
	}
	if !strings.Contains(err.Error(), "subscription") {
		t.Errorf("refused, but the error does not name the subscription: %v", err)
	}
	t.Logf("refused: %v", err)
}

// dropPublisher removes the test's subscription, its slot and the publisher
// database, also when an interrupted run left some of them.
func dropPublisher(t *testing.T, db *pgx.Conn, pubDB string) {
	t.Helper()
	ctx := context.Background()
	if _, err := db.Exec(ctx, `DROP SUBSCRIPTION IF EXISTS cacheguard_test_sub`); err != nil {
		// The publisher is gone: detach the slot, then drop.
		sqlExec(t, db, `ALTER SUBSCRIPTION cacheguard_test_sub DISABLE`)
		sqlExec(t, db, `ALTER SUBSCRIPTION cacheguard_test_sub SET (slot_name = NONE)`)
		sqlExec(t, db, `DROP SUBSCRIPTION cacheguard_test_sub`)
	}
	waitFor(t, 10*time.Second, "dropping the slot", func() bool {
		_, err := db.Exec(ctx, `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = 'cacheguard_test_sub'`)
		return err == nil // fails while a walsender still holds it
	})
	sqlExec(t, db, `DROP DATABASE IF EXISTS `+pubDB+` WITH (FORCE)`)
}
