package guard

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/seed25b00da8/cuckoo"
)

// A snapshot file holds a filter and its position in the change log: the
// line snapshotMagic, one line of JSON (snapshotHeader), then the filter's
// own encoding (cuckoo's WriteTo, FORMAT.md). A new instance loads it and
// applies the log after Seq instead of scanning the table. (Version 1 files,
// written before the log was kept by triggers, are refused: start without
// them once, which scans.)
const snapshotMagic = "cacheguard snapshot v2\n"

type snapshotHeader struct {
	GuardID string `json:"guard_id"`
	Table   string `json:"table"`
	Seq     int64  `json:"seq"`
	// Entry identifies the change-log entry at Seq (Conn.Entry); "" when
	// Seq is 0. Files without it are loaded unchecked.
	Entry     string    `json:"entry,omitempty"`
	Keys      int       `json:"keys"`
	WrittenAt time.Time `json:"written_at"`
}

// ErrSnapshotMismatch is wrapped by the errors for a snapshot that does not
// belong to the database.
var ErrSnapshotMismatch = errors.New("snapshot does not match the database")

// sameTableName reports whether a snapshot written for the table named
// recorded is for the table named current: the same name, or with
// PostgreSQL the name without its schema, which older versions wrote for a
// table on the session's search_path (the guard id, compared besides,
// tells tables apart).
func sameTableName(recorded, current string) bool {
	return recorded == current || !strings.Contains(recorded, ".") && strings.HasSuffix(current, "."+recorded)
}

// loadSnapshot loads cfg.Snapshot if it names an existing file and reports
// whether it did.
func (s *Service) loadSnapshot(ctx context.Context) (bool, error) {
	if s.cfg.Snapshot == "" {
		return false, nil
	}
	file, err := os.Open(s.cfg.Snapshot)
	if errors.Is(err, fs.ErrNotExist) {
		s.log.Printf("no snapshot at %s yet: building from the table", s.cfg.Snapshot)
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("snapshot: %w", err)
	}
	defer file.Close()
	br := bufio.NewReaderSize(file, 4096)
	magic := make([]byte, len(snapshotMagic))
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != snapshotMagic {
		return false, fmt.Errorf("%s is not a cacheguard snapshot", s.cfg.Snapshot)
	}
	line, err := br.ReadSlice('\n')
	var h snapshotHeader
	if err != nil || json.Unmarshal(line, &h) != nil {
		return false, fmt.Errorf("%s: bad snapshot header", s.cfg.Snapshot)
	}
	if id := s.store.GuardID(); h.GuardID != id || !sameTableName(h.Table, s.store.Table()) {
		return false, fmt.Errorf("%w: %s was written for table %s (guard id %q), this is %s (%q): another database, or the table was reset",
			ErrSnapshotMismatch, s.cfg.Snapshot, h.Table, h.GuardID, s.store.Table(), id)
	}
	lo, hi, err := s.store.LogBounds(ctx)
	if err != nil {
		return false, err
	}
	if h.Seq > hi {
		return false, fmt.Errorf("%w: %s is at change %d but the log ends at %d (log reset or restored from an older backup)", ErrSnapshotMismatch, s.cfg.Snapshot, h.Seq, hi)
	}
	if lo > h.Seq+1 {
		return false, fmt.Errorf("%w: %s is at change %d but the log starts at %d: the changes in between are gone", ErrSnapshotMismatch, s.cfg.Snapshot, h.Seq, lo)
	}
	// The log may reach beyond the position and still not be the one the
	// snapshot was taken of: restored from a backup older than the
	// snapshot, then written to, it numbers new entries with the seqs of
	// lost ones, which the snapshot would skip. The entry at the position
	// must be the one the snapshot saw.
	if h.Seq > 0 && h.Entry != "" {
		c, err := s.store.Conn(ctx)
		if err != nil {
			return false, err
		}
		id, err := c.Entry(ctx, h.Seq)
		c.Release()
		if err != nil {
			return false, err
		}
		if id != h.Entry {
			return false, fmt.Errorf("%w: %s is at change %d, which the log no longer holds as it was (restored from an older backup, then written to?)", ErrSnapshotMismatch, s.cfg.Snapshot, h.Seq)
		}
	}
	f := new(cuckoo.Filter)
	if _, err := f.ReadFrom(br); err != nil {
		return false, fmt.Errorf("%s: %w", s.cfg.Snapshot, err)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return false, fmt.Errorf("%s: data after the filter", s.cfg.Snapshot)
	}
	if f.Len() != h.Keys {
		return false, fmt.Errorf("%s: header says %d keys, filter holds %d", s.cfg.Snapshot, h.Keys, f.Len())
	}
	if why := s.otherShape(f); why != "" {
		s.log.Printf("the snapshot %s holds %s: building from the table instead", s.cfg.Snapshot, why)
		return false, nil
	}
	s.filt.Store(f)
	s.applied.Store(h.Seq)
	s.source.Store("snapshot")
	s.log.Printf("filter loaded from %s (%d keys, change %d, written %s); applying the log since", s.cfg.Snapshot, f.Len(), h.Seq, h.WrittenAt.Format(time.RFC3339))
	return true, nil
}

// otherShape says how f, a filter loaded from a snapshot, differs from the
// one Config asks for, or returns "" when it does not: a capacity given
// (not 0) must give f's Cap, a layout given f's fingerprint bits and slots
// per bucket. A snapshot keeps the filter it was taken of; without this,
// restarting with a larger -capacity after the filter filled up loaded the
// full one again.
func (s *Service) otherShape(f *cuckoo.Filter) string {
	layoutGiven := layoutOf(s.cfg) != nil
	capa := s.cfg.Capacity
	if capa == 0 && !layoutGiven {
		return ""
	}
	if capa == 0 {
		capa = max(f.Len(), 1) // only the layout is compared
	}
	want, err := cuckoo.New(capa, layoutOf(s.cfg))
	if err != nil {
		return "" // New reports it when it scans
	}
	switch {
	case layoutGiven && (want.FingerprintBits() != f.FingerprintBits() || want.SlotsPerBucket() != f.SlotsPerBucket()):
		return fmt.Sprintf("%d-bit fingerprints, %d per bucket, not the %d-bit, %d per bucket asked for", f.FingerprintBits(), f.SlotsPerBucket(), want.FingerprintBits(), want.SlotsPerBucket())
	case s.cfg.Capacity != 0 && want.Cap() != f.Cap():
		return fmt.Sprintf("a filter of %d slots, not the %d of capacity %d", f.Cap(), want.Cap(), s.cfg.Capacity)
	}
	return ""
}

// WriteSnapshot writes the filter and its change-log position to path
// (through a temporary file renamed into place). It blocks PUTs for the time
// it takes and applies the log up to its end first (and rebuilds if that
// applied a TRUNCATE), so the snapshot holds exactly the changes up to its
// seq: no creation in flight, none of this instance's creations beyond it.
func (s *Service) WriteSnapshot(ctx context.Context, path string) error {
	if s.filter() == nil {
		return errors.New("snapshots need the filter")
	}
	lg, err := s.store.Conn(ctx) // before the locks: see catchUp and rebuild
	if err != nil {
		return err
	}
	defer lg.Release()
	s.snapMu.Lock()
	defer s.snapMu.Unlock()
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	if err := s.catchUpLocked(ctx, lg, math.MaxInt64); err != nil {
		return err
	}
	// A TRUNCATE applied and not yet rebuilt: the filter holds the
	// truncated rows' copies at a position past the 'R', and an instance
	// loading it would never rebuild. Rebuild first.
	if s.needsRebuild.Load() {
		if err := s.rebuildLocked(ctx, lg); err != nil {
			return err
		}
	}
	if s.degraded.Load() {
		return errors.New("the filter is degraded (full); not writing a snapshot of it")
	}
	f := s.filter()
	seq := s.applied.Load()
	var entry string
	if seq > 0 {
		// "" if the entry is gone (a scan's position may be another
		// table's entry, which its Reset deleted): loaded unchecked.
		if entry, err = lg.Entry(ctx, seq); err != nil {
			return err
		}
	}
	h, err := json.Marshal(snapshotHeader{GuardID: s.store.GuardID(), Table: s.store.Table(), Seq: seq, Entry: entry, Keys: f.Len(), WrittenAt: time.Now().UTC()})
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".cacheguard-snapshot-*")
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	defer os.Remove(tmp.Name()) // fails harmlessly after the rename
	bw := bufio.NewWriterSize(tmp, 1<<16)
	bw.WriteString(snapshotMagic)
	bw.Write(h)
	bw.WriteByte('\n')
	if _, err := f.WriteTo(bw); err != nil {
		tmp.Close()
		return fmt.Errorf("snapshot: %w", err)
	}
	if err := bw.Flush(); err != nil {
		tmp.Close()
		return fmt.Errorf("snapshot: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("snapshot: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	return nil
}
