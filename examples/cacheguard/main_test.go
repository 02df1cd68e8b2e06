package main

import (
	"bytes"
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestRunBadStart: every bad start is an error (non-zero exit in main).
func TestRunBadStart(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, want string
		args       []string
	}{
		{"flag", "flag provided but not defined", []string{"-nope"}},
		{"arg", "unexpected arguments", []string{"extra"}},
		{"seed", "must not be negative", []string{"-seed", "-1", "-sqlite", filepath.Join(dir, "a.db")}},
		{"fpbits", "fingerprint", []string{"-fpbits", "9", "-sqlite", filepath.Join(dir, "b.db")}},
		{"table", "table name", []string{"-table", "items; drop table x", "-sqlite", filepath.Join(dir, "c.db")}},
		{"snapshot-nofilter", "snapshot needs the filter", []string{"-no-filter", "-snapshot", filepath.Join(dir, "s"), "-sqlite", filepath.Join(dir, "e.db")}},
		{"sqlite-dir", "cacheguard", []string{"-sqlite", filepath.Join(dir, "no", "such", "dir.db")}},
		{"pg-down", "unreachable", []string{"-dsn", "postgres://u:p@127.0.0.1:1/db?connect_timeout=2"}},
		{"addr", "listen", []string{"-addr", "256.0.0.1:0", "-sqlite", filepath.Join(dir, "d.db")}},
	} {
		t.Run("case="+tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			err := run(context.Background(), tc.args, &stderr, nil)
			if err == nil || !strings.Contains(err.Error()+stderr.String(), tc.want) {
				t.Fatalf("run %q: error %v; want one mentioning %q", tc.args, err, tc.want)
			}
		})
	}
}

// TestRunServes starts the command on SQLite, uses it over HTTP and stops it
// (as SIGINT and SIGTERM do): the shutdown is logged.
func TestRunServes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	var logBuf syncBuffer
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-sqlite", filepath.Join(t.TempDir(), "x.db"), "-seed", "500"}, &logBuf, ready)
	}()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("run: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("not ready within 30s")
	}
	get := func(key string) (int, string) {
		resp, err := http.Get("http://" + addr + "/items/" + key)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("X-Cacheguard-Source")
	}
	if code, _ := get("key00000042"); code != 200 {
		t.Fatalf("GET seeded key: %d; want 200", code)
	}
	if code, src := get("nothing-here"); code != 404 || src != "filter" {
		t.Fatalf("GET absent key: %d from %q; want 404 from filter", code, src)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run after shutdown: %v", err)
	}
	if log := logBuf.String(); !strings.Contains(log, "shutting down (sqlite backend)") {
		t.Errorf("log: %q; want the shutdown logged", log)
	}
}

// syncBuffer is a bytes.Buffer safe for the logger's goroutine and the
// test's.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
