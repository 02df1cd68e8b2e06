package guard

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func newSQLite(t *testing.T, seed int) *SQLite {
	t.Helper()
	s, err := OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "t.db"), SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if seed > 0 {
		if err := s.Seed(context.Background(), "p", seed); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func newService(t *testing.T, cfg Config) *Service {
	t.Helper()
	s, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// do sends one request to h and returns the status, body and source header.
func do(h http.Handler, method, key, body string) (int, string, string) {
	r := httptest.NewRequest(method, "/items/"+key, strings.NewReader(body))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code, w.Body.String(), w.Header().Get(SourceHeader)
}

// TestKeysWithSlashes: a key is the whole rest of the path, slashes
// included, whether they come plain or escaped.
func TestKeysWithSlashes(t *testing.T) {
	s := newService(t, Config{Store: newSQLite(t, 0)})
	h := s.Handler()
	if code, body, _ := do(h, "PUT", "dir/file", "x"); code != 201 {
		t.Fatalf("PUT dir/file: %d %q; want 201", code, body)
	}
	for _, k := range []string{"dir/file", "dir%2Ffile"} {
		if code, body, _ := do(h, "GET", k, ""); code != 200 || body != "x" {
			t.Errorf("GET %s: %d %q; want 200 \"x\"", k, code, body)
		}
	}
	if code, _, src := do(h, "GET", "dir/other", ""); code != 404 || src != "filter" {
		t.Errorf("GET dir/other: %d from %q; want 404 from the filter", code, src)
	}
	if code, _, _ := do(h, "DELETE", "dir%2Ffile", ""); code != 204 && code != 200 {
		t.Errorf("DELETE dir%%2Ffile: %d; want success", code)
	}
	if code, _, _ := do(h, "GET", "dir/file", ""); code != 404 {
		t.Errorf("GET dir/file after DELETE: %d; want 404", code)
	}
}

// TestKeysAreNotCleaned: "//", "/./" and "/../" are part of a key; no
// request is redirected to (and so, through a client that follows the
// redirect, acts on) another key's row. With http.ServeMux's cleaning a
// PUT of a//b answered 307 to a/b and Go's client overwrote a/b's row.
func TestKeysAreNotCleaned(t *testing.T) {
	s := newService(t, Config{Store: newSQLite(t, 0)})
	h := s.Handler()
	if code, _, _ := do(h, "PUT", "victim/x", "precious"); code != 201 {
		t.Fatalf("PUT victim/x: %d", code)
	}
	for _, k := range []string{"victim//x", "victim/./x", "other/../victim/x", "./victim/x"} {
		if code, body, _ := do(h, "PUT", k, "overwritten"); code != 201 {
			t.Errorf("PUT %s: %d %q; want 201 (a key of its own)", k, code, body)
		}
		if code, body, _ := do(h, "GET", k, ""); code != 200 || body != "overwritten" {
			t.Errorf("GET %s: %d %q; want 200 \"overwritten\"", k, code, body)
		}
		if code, _, _ := do(h, "DELETE", k, ""); code != 204 {
			t.Errorf("DELETE %s: %d; want 204", k, code)
		}
	}
	if code, body, _ := do(h, "GET", "victim/x", ""); code != 200 || body != "precious" {
		t.Errorf("GET victim/x: %d %q; want its own row, 200 \"precious\"", code, body)
	}
	r := httptest.NewRequest("POST", "/items/victim/x", nil)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != 405 || w.Header().Get("Allow") == "" {
		t.Errorf("POST: %d, Allow %q; want 405 with Allow", w.Code, w.Header().Get("Allow"))
	}
}

func TestSQLiteGetPutDelete(t *testing.T) {
	st := newSQLite(t, 1000)
	s := newService(t, Config{Store: st})
	h := s.Handler()
	if got := s.Stats(); got.Keys != 1000 || got.BuiltFrom != "scan" {
		t.Fatalf("after build: keys %d, built from %q; want 1000, scan", got.Keys, got.BuiltFrom)
	}
	if code, body, src := do(h, "GET", SeedKey("p", 7), ""); code != 200 || body != "v:"+SeedKey("p", 7) || src != "db" {
		t.Fatalf("GET present: %d %q %q; want 200 v:... db", code, body, src)
	}
	reads := s.Stats().DBReads
	if code, _, src := do(h, "GET", "absent-1", ""); code != 404 || src != "filter" {
		t.Fatalf("GET absent: %d from %q; want 404 from filter", code, src)
	}
	if got := s.Stats().DBReads; got != reads {
		t.Fatalf("a rejected GET queried the database: db_reads %d; want %d", got, reads)
	}
	if code, _, _ := do(h, "PUT", "new-1", "a"); code != http.StatusCreated {
		t.Fatalf("PUT new: %d; want 201", code)
	}
	if code, _, _ := do(h, "PUT", "new-1", "b"); code != http.StatusNoContent {
		t.Fatalf("PUT existing: %d; want 204", code)
	}
	if got := s.Stats().Keys; got != 1001 {
		t.Fatalf("filter keys after a create and an update: %d; want 1001 (one copy per row)", got)
	}
	if code, body, _ := do(h, "GET", "new-1", ""); code != 200 || body != "b" {
		t.Fatalf("GET after PUT: %d %q; want 200 b", code, body)
	}
	if code, _, _ := do(h, "DELETE", "new-1", ""); code != http.StatusNoContent {
		t.Fatalf("DELETE: %d; want 204", code)
	}
	if code, _, _ := do(h, "DELETE", "new-1", ""); code != http.StatusNotFound {
		t.Fatalf("DELETE again: %d; want 404", code)
	}
	if code, _, _ := do(h, "GET", "new-1", ""); code != 404 {
		t.Fatalf("GET after DELETE: %d; want 404", code)
	}
	if got := s.Stats().Keys; got != 1000 {
		t.Fatalf("filter keys after the delete: %d; want 1000", got)
	}
	for i := range 1000 {
		if !s.MayContain(SeedKey("p", i)) {
			t.Fatalf("seeded key %d rejected", i)
		}
	}
}

func TestBadInput(t *testing.T) {
	s := newService(t, Config{Store: newSQLite(t, 10)})
	h := s.Handler()
	for _, tc := range []struct {
		name, method, key, body string
		want                    int
	}{
		{"empty", "GET", "", "", 400},
		{"empty-put", "PUT", "", "x", 400},
		{"oversized", "GET", strings.Repeat("k", MaxKeyLen+1), "", 400},
		{"oversized-put", "PUT", strings.Repeat("k", MaxKeyLen+1), "x", 400},
		{"nul", "PUT", "a%00b", "x", 400},
		{"not-utf8", "DELETE", "%ff%fe", "", 400},
		{"max-key", "PUT", strings.Repeat("k", MaxKeyLen), "x", 201},
		{"big-value", "PUT", "big", strings.Repeat("v", MaxValueLen+1), 413},
	} {
		t.Run("case="+tc.name, func(t *testing.T) {
			if code, body, _ := do(h, tc.method, tc.key, tc.body); code != tc.want {
				t.Fatalf("%s %.20q: %d %q; want %d", tc.method, tc.key, code, body, tc.want)
			}
		})
	}
	if got := s.Stats().Keys; got != 11 {
		t.Fatalf("filter keys: %d; want 11 (10 seeded + the one good PUT)", got)
	}
	if _, err := New(context.Background(), Config{Store: newSQLite(t, 0), FingerprintBits: 10}); err == nil {
		t.Fatal("New with 10 fingerprint bits: no error")
	}
	for _, cfg := range []Config{
		{Store: newSQLite(t, 0), FalsePositiveRate: 0.00001},
		{Store: newSQLite(t, 0), FalsePositiveRate: 0.01, FingerprintBits: 12},
	} {
		if _, err := New(context.Background(), cfg); err == nil {
			t.Fatalf("New with false-positive rate %v and %d bits: no error", cfg.FalsePositiveRate, cfg.FingerprintBits)
		}
	}
	for _, tc := range []struct {
		p           float64
		bits, slots int
	}{{0.03, 8, 4}, {0.02, 12, 5}, {0.002, 12, 4}, {0.001, 15, 4}} {
		s, err := New(context.Background(), Config{Store: newSQLite(t, 0), FalsePositiveRate: tc.p})
		if err != nil {
			t.Fatal(err)
		}
		if st := s.Stats(); st.FingerprintBits != tc.bits || st.SlotsPerBucket != tc.slots {
			t.Errorf("false-positive rate %v: %d-bit fingerprints, %d per bucket; want %d, %d", tc.p, st.FingerprintBits, st.SlotsPerBucket, tc.bits, tc.slots)
		}
		s.Close()
	}
	if _, err := New(context.Background(), Config{Store: newSQLite(t, 0), NoFilter: true, Snapshot: "x"}); err == nil {
		t.Fatal("New with a snapshot and no filter: no error")
	}
}

// TestDatabaseGone: with the database closed, GETs that pass the filter and
// all writes answer 503 (never 404 for a present key) with a generic body
// (the error, which may name the database, goes to the log), and the
// filter keeps every key.
func TestDatabaseGone(t *testing.T) {
	st := newSQLite(t, 100)
	s := newService(t, Config{Store: st})
	h := s.Handler()
	st.Close()
	if code, body, _ := do(h, "GET", SeedKey("p", 1), ""); code != 503 || body != "database unavailable\n" {
		t.Fatalf("GET present with the database gone: %d %q; want 503 \"database unavailable\"", code, body)
	}
	if code, _, _ := do(h, "PUT", "new", "x"); code != 503 {
		t.Fatalf("PUT with the database gone: %d; want 503", code)
	}
	if code, _, _ := do(h, "DELETE", SeedKey("p", 2), ""); code != 503 {
		t.Fatalf("DELETE with the database gone: %d; want 503", code)
	}
	if got := s.Stats().Keys; got != 100 {
		t.Fatalf("filter keys: %d; want 100", got)
	}
	for i := range 100 {
		if !s.MayContain(SeedKey("p", i)) {
			t.Fatalf("key %d rejected after database errors", i)
		}
	}
	if _, err := New(context.Background(), Config{Store: st}); err == nil {
		t.Fatal("New over a closed database: no error")
	}
}

// TestPutFailsAfterFilterInsert: a transaction that fails after the key went
// into the filter takes the copy out again and writes no row.
func TestPutFailsAfterFilterInsert(t *testing.T) {
	st := newSQLite(t, 10)
	s := newService(t, Config{Store: st})
	failBeforeCommit = func(key string) error {
		if key == "doomed" {
			return errors.New("injected failure")
		}
		return nil
	}
	t.Cleanup(func() { failBeforeCommit = nil })
	if code, _, _ := do(s.Handler(), "PUT", "doomed", "x"); code != 503 {
		t.Fatalf("failing PUT: %d; want 503", code)
	}
	if got := s.Stats().Keys; got != 10 {
		t.Fatalf("filter keys after a failed PUT: %d; want 10 (copy removed)", got)
	}
	if _, ok, _ := st.Get(context.Background(), "doomed"); ok {
		t.Fatal("the failed PUT left a row")
	}
}

// TestFilterFull: a PUT whose key does not fit is refused and writes nothing;
// every row written before is still accepted.
func TestFilterFull(t *testing.T) {
	st := newSQLite(t, 0)
	s := newService(t, Config{Store: st, Capacity: 64})
	h := s.Handler()
	var made []string
	full := false
	for i := 0; i < 200 && !full; i++ {
		k := fmt.Sprintf("k%d", i)
		switch code, body, _ := do(h, "PUT", k, "x"); code {
		case 201:
			made = append(made, k)
		case 503:
			full = true
			if _, ok, _ := st.Get(context.Background(), k); ok {
				t.Fatalf("refused PUT %s left a row", k)
			}
			if !strings.Contains(body, "filter is full") {
				t.Fatalf("refused PUT body %q; want it to say the filter is full", body)
			}
		default:
			t.Fatalf("PUT %s: %d", k, code)
		}
	}
	if !full {
		t.Fatalf("200 PUTs into a filter of capacity %d: never full", s.Stats().Capacity)
	}
	for _, k := range made {
		if code, _, _ := do(h, "GET", k, ""); code != 200 {
			t.Fatalf("GET %s after the filter filled: %d; want 200", k, code)
		}
	}
	if got := s.Stats().Keys; got != len(made) {
		t.Fatalf("filter keys %d; want %d rows", got, len(made))
	}
}

// TestConcurrentPutDelete hammers a few keys with PUT, DELETE and GET from
// more goroutines than CPUs. Keys pinned present must never be rejected;
// afterwards every row must be accepted and the filter must hold exactly one
// copy per row.
func TestConcurrentPutDelete(t *testing.T) {
	st := newSQLite(t, 0)
	s := newService(t, Config{Store: st})
	h := s.Handler()
	const pinned = 8
	for i := range pinned {
		if code, _, _ := do(h, "PUT", fmt.Sprintf("pin%d", i), "x"); code != 201 {
			t.Fatalf("PUT pin%d: %d", i, code)
		}
	}
	goroutines, ops := 48, 60
	if testing.Short() {
		goroutines, ops = 16, 30
	}
	var wg sync.WaitGroup
	errc := make(chan error, goroutines)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 1))
			for range ops {
				k := fmt.Sprintf("hot%d", r.IntN(6))
				switch r.IntN(3) {
				case 0:
					if code, _, _ := do(h, "PUT", k, "v"); code != 201 && code != 204 {
						errc <- fmt.Errorf("PUT %s: %d", k, code)
						return
					}
				case 1:
					if code, _, _ := do(h, "DELETE", k, ""); code != 204 && code != 404 {
						errc <- fmt.Errorf("DELETE %s: %d", k, code)
						return
					}
				}
				p := fmt.Sprintf("pin%d", r.IntN(pinned))
				if code, _, src := do(h, "GET", p, ""); code != 200 {
					errc <- fmt.Errorf("GET pinned %s: %d from %s; want 200", p, code, src)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	rows := pinned
	for i := range 6 {
		k := fmt.Sprintf("hot%d", i)
		_, ok, err := st.Get(context.Background(), k)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			rows++
			if !s.MayContain(k) {
				t.Fatalf("row %s present but rejected", k)
			}
		}
	}
	if got := s.Stats().Keys; got != rows {
		t.Fatalf("filter keys %d; want %d (one copy per row)", got, rows)
	}
}

func TestNoFilter(t *testing.T) {
	s := newService(t, Config{Store: newSQLite(t, 10), NoFilter: true})
	if code, _, src := do(s.Handler(), "GET", "absent", ""); code != 404 || src != "db" {
		t.Fatalf("GET absent without filter: %d from %q; want 404 from db", code, src)
	}
	if st := s.Stats(); st.Filter || st.DBReads != 1 {
		t.Fatalf("stats without filter: filter %v, db_reads %d; want false, 1", st.Filter, st.DBReads)
	}
}

// TestSQLitePathsWithURIChars: a database file whose name holds '#', '?'
// or '%' is the file opened (before, "shop#2.db" opened a new "shop").
func TestSQLitePathsWithURIChars(t *testing.T) {
	for _, name := range []string{"shop#2.db", "my?x.db", "my%41.db", "a b.db"} {
		dir := t.TempDir()
		path := filepath.Join(dir, name)
		s, err := OpenSQLite(context.Background(), path, SQLiteOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := s.Seed(context.Background(), "p", 3); err != nil {
			t.Fatal(err)
		}
		s.Close()
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, e := range ents {
			if e.Name() == name {
				found = true
			} else if !strings.HasPrefix(e.Name(), name+"-") {
				t.Errorf("%s: opened %s too", name, e.Name())
			}
		}
		if !found {
			t.Errorf("%s: no such file after opening it; the directory holds %v", name, ents)
		}
	}
}

// TestSnapshotOfAnotherShapeNotLoaded: a snapshot whose filter is not the
// one Config asks for (another capacity given, another layout given) is
// not loaded; the filter is built from the table instead. Before, a
// restart with a larger capacity after the filter had filled up loaded the
// full filter from the snapshot, and every new key was refused with 503
// "restart with a larger -capacity".
func TestSnapshotOfAnotherShapeNotLoaded(t *testing.T) {
	ctx := context.Background()
	st := newSQLite(t, 0)
	path := filepath.Join(t.TempDir(), "snap")
	a := newService(t, Config{Store: st, Capacity: 10, Snapshot: path})
	full := 0
	for i := range 300 {
		if code, _, _ := do(a.Handler(), "PUT", fmt.Sprintf("k%d", i), "x"); code == 503 {
			full++
		}
	}
	if full == 0 {
		t.Fatal("300 PUTs into a filter for 10 keys: none refused")
	}
	if err := a.WriteSnapshot(ctx, path); err != nil {
		t.Fatal(err)
	}
	a.Close()
	// The cases that load the snapshot come first: a "scan" case's PUT
	// puts an entry in the log past the snapshot, which the full filter
	// loaded by a later case has no room for; with the capacity chosen
	// automatically its follower then rebuilds it at once, and BuiltFrom
	// reads "rebuild" if the follower wins the race with Stats.
	for _, tc := range []struct {
		name string
		cfg  Config
		from string
	}{
		{"same flags", Config{Capacity: 10}, "snapshot"},
		{"no flags", Config{}, "snapshot"},
		{"default layout named", Config{FingerprintBits: 12}, "snapshot"},
		{"larger capacity", Config{Capacity: 1000}, "scan"},
		{"layout", Config{FingerprintBits: 8}, "scan"},
		{"rate", Config{FalsePositiveRate: 0.0003}, "scan"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Store, cfg.Snapshot = st, path
			b := newService(t, cfg)
			if got := b.Stats().BuiltFrom; got != tc.from {
				t.Fatalf("built from %q; want %q", got, tc.from)
			}
			if tc.from == "scan" {
				if code, body, _ := do(b.Handler(), "PUT", "new-"+strings.ReplaceAll(tc.name, " ", "-"), "x"); code != 201 {
					t.Errorf("PUT of a new key: %d %q; want 201", code, body)
				}
			}
			b.Close()
		})
	}
}
