package cuckoo

// Placeholders until Locked mode lands; New rejects Locked meanwhile.

func (f *Filter) addLocked(b1, b2, fp uint64) bool                         { return false }
func (f *Filter) lookupLocked(b1, b2, fp uint64) bool                      { return false }
func (f *Filter) deleteLocked(b1, b2, fp uint64) bool                      { return false }
func (f *Filter) moveLocked(src uint64, s int, fp uint64, dst uint64) bool { return false }
func (f *Filter) resetLocked()                                             {}
