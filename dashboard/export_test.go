package dashboard

// SyncBuffer is syncBuffer for the package's external tests: a log sink the
// test server's goroutines write to.
type SyncBuffer = syncBuffer
