package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed25b00da8/cuckoo"
)

// TestMain runs the command's main instead of the tests when
// runMainEnv is set: TestErrorHasOnePrefix runs the test binary as the
// command.
func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

const runMainEnv = "CACHEGUARD_TEST_RUN_MAIN"

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
		{"sqlite-dir", "SQLite", []string{"-sqlite", filepath.Join(dir, "no", "such", "dir.db")}},
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

// runBad runs the command with args, which must fail before serving; it
// returns run's error.
func runBad(t *testing.T, args []string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ready := make(chan string, 1)
	done := make(chan error, 1)
	var stderr syncBuffer
	go func() { done <- run(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), &stderr, ready) }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatalf("run %q: no error", args)
		}
		return err
	case <-ready:
		cancel()
		<-done
		t.Fatalf("run %q: served; want an error", args)
	}
	return nil
}

// TestRunRejectsExplicitFPR: a -fpr on the command line is checked whatever
// its value, 0 included (the flag's default, which stands for no -fpr), and
// fails as cuckoo.WithFalsePositiveRate fails for that rate; -fpr and
// -fpbits together fail. A rate some layout gives is accepted.
func TestRunRejectsExplicitFPR(t *testing.T) {
	dir := t.TempDir()
	for i, rate := range []string{"0", "-0", "-1", "NaN", "1", "2", "+Inf", "1e-12"} {
		t.Run("fpr="+rate, func(t *testing.T) {
			p, err := strconv.ParseFloat(rate, 64)
			if err != nil {
				t.Fatal(err)
			}
			_, want := cuckoo.New(1, cuckoo.WithFalsePositiveRate(p))
			if want == nil {
				t.Fatalf("cuckoo.New accepts rate %v", p)
			}
			err = runBad(t, []string{"-fpr", rate, "-sqlite", filepath.Join(dir, strconv.Itoa(i)+".db")})
			if !strings.Contains(err.Error(), "-fpr") || !strings.Contains(err.Error(), want.Error()) {
				t.Fatalf("-fpr %s: error %q; want one naming -fpr with %q", rate, err, want)
			}
		})
	}
	for _, args := range [][]string{{"-fpr", "0", "-fpbits", "12"}, {"-fpr", "0.01", "-fpbits", "12"}, {"-fpbits", "15", "-fpr", "0.001"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			err := runBad(t, append(args, "-sqlite", filepath.Join(dir, "both.db")))
			if !strings.Contains(err.Error(), "-fpr and -fpbits both given") {
				t.Fatalf("run %q: error %q; want -fpr and -fpbits both given", args, err)
			}
		})
	}
	t.Run("fpr=0.001 serves", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		_, done, _ := startRun(t, ctx, "-fpr", "0.001", "-sqlite", filepath.Join(dir, "good.db"))
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("run after shutdown: %v", err)
		}
	})
}

// TestRunBadFlagsLeaveDatabaseUntouched: flags that are wrong in themselves
// fail before any database is opened (the listen address is taken first:
// before, a bad -addr failed after the table and its triggers were made). The SQLite file's directory stays
// empty (no database, WAL or tables), and with -dsn the flag's error comes
// back, not the unreachable server's.
func TestRunBadFlagsLeaveDatabaseUntouched(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		args       []string
	}{
		{"fpr-negative", "-fpr -1", []string{"-fpr", "-1"}},
		{"fpr-zero", "-fpr 0", []string{"-fpr", "0"}},
		{"fpr-and-fpbits", "both given", []string{"-fpr", "0.01", "-fpbits", "12"}},
		{"fpbits", "-fpbits 9", []string{"-fpbits", "9"}},
		{"capacity", "-capacity -5", []string{"-capacity", "-5"}},
		{"capacity-huge", "-capacity 9999999999999", []string{"-capacity", "9999999999999"}},
		{"poll", "-poll -5s", []string{"-poll", "-5s"}},
		{"poll-tiny", "-poll 1ns", []string{"-poll", "1ns"}},
		{"snapshot-dir", "cannot write in its directory", []string{"-snapshot", filepath.Join(t.TempDir(), "no", "such", "s.snap")}},
		{"addr", "missing port", []string{"-addr", "bogus"}},
		{"snapshot-nofilter", "snapshot needs the filter", []string{"-no-filter", "-snapshot", filepath.Join(t.TempDir(), "s")}},
		{"seed", "-seed -1", []string{"-seed", "-1"}},
	} {
		t.Run(tc.name+"/sqlite", func(t *testing.T) {
			dir := t.TempDir()
			err := runBad(t, append(tc.args, "-sqlite", filepath.Join(dir, "x.db")))
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("run %q: error %q; want one mentioning %q", tc.args, err, tc.want)
			}
			ents, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				t.Errorf("run %q created %s in the database's directory", tc.args, e.Name())
			}
		})
		t.Run(tc.name+"/postgres", func(t *testing.T) {
			err := runBad(t, append(tc.args, "-dsn", "postgres://u:p@127.0.0.1:1/db?connect_timeout=2"))
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("run %q: error %q; want one mentioning %q (before connecting)", tc.args, err, tc.want)
			}
		})
	}
}

// TestErrorHasOnePrefix runs the command (main, in a child process) on
// failing starts, through guard's errors and run's own: it exits 1 and
// prints the error with one "cacheguard:" prefix (and nothing else).
func TestErrorHasOnePrefix(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, want string
		args       []string
	}{
		{"table", "SQLite table name", []string{"-table", "items; drop table x", "-sqlite", filepath.Join(dir, "c.db")}},
		{"sqlite-dir", "SQLite", []string{"-sqlite", filepath.Join(dir, "no", "such", "dir.db")}},
		{"pg-down", "unreachable", []string{"-dsn", "postgres://u:p@127.0.0.1:1/db?connect_timeout=2"}},
		{"fpr", "-fpr 0", []string{"-fpr", "0", "-sqlite", filepath.Join(dir, "d.db")}},
		{"arg", "unexpected arguments", []string{"extra"}},
	} {
		t.Run("case="+tc.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], append([]string{"-addr", "127.0.0.1:0"}, tc.args...)...)
			cmd.Env = append(os.Environ(), runMainEnv+"=1")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			done := make(chan error, 1)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			go func() { done <- cmd.Wait() }()
			var err error
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Fatalf("cacheguard %q still running after 30s; want a failed start", tc.args)
			}
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("cacheguard %q: %v; want exit status 1", tc.args, err)
			}
			out := stderr.String()
			if !strings.HasPrefix(out, "cacheguard: ") || strings.Count(out, "cacheguard:") != 1 || !strings.Contains(out, tc.want) {
				t.Fatalf("cacheguard %q printed %q; want \"cacheguard: ...%s...\" with one prefix", tc.args, out, tc.want)
			}
		})
	}
}

// TestRunServes starts the command on SQLite, uses it over HTTP and stops it
// (as SIGINT and SIGTERM do): the shutdown is logged.
func TestRunServes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	addr, done, logBuf := startRun(t, ctx, "-sqlite", filepath.Join(t.TempDir(), "x.db"), "-seed", "500")
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

// startRun runs the command with args (and -addr 127.0.0.1:0) until ctx is
// done, waits until it serves, and returns its address, its result and its
// log.
func startRun(t *testing.T, ctx context.Context, args ...string) (addr string, done <-chan error, log *syncBuffer) {
	t.Helper()
	ready := make(chan string, 1)
	res := make(chan error, 1)
	log = new(syncBuffer)
	go func() { res <- run(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), log, ready) }()
	select {
	case addr = <-ready:
	case err := <-res:
		t.Fatalf("run %q: %v", args, err)
	case <-time.After(30 * time.Second):
		t.Fatalf("run %q: not ready within 30s", args)
	}
	return addr, res, log
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

// TestShutdownWritesSnapshotPastSlowClient: a client that stalls in the
// middle of a PUT's body at shutdown has its connection closed after
// shutdownWait, and the snapshot is still written (it shared the shutdown's
// deadline, and the process exited 1 with "context deadline exceeded" and
// no snapshot).
func TestShutdownWritesSnapshotPastSlowClient(t *testing.T) {
	shutdownWait = 200 * time.Millisecond
	t.Cleanup(func() { shutdownWait = 10 * time.Second })
	dir := t.TempDir()
	snap := filepath.Join(dir, "s.snap")
	ctx, cancel := context.WithCancel(context.Background())
	addr, done, logBuf := startRun(t, ctx, "-sqlite", filepath.Join(dir, "x.db"), "-snapshot", snap)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("PUT /items/slow HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the request is in its handler
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run with a stalled client at shutdown: %v\n%s", err, logBuf.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("still running 30s after the shutdown began")
	}
	if _, err := os.Stat(snap); err != nil {
		t.Errorf("no snapshot after the shutdown: %v\n%s", err, logBuf.String())
	}
}
