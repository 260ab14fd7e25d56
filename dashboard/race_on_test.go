//go:build race

package dashboard

// raceEnabled: the race detector roughly doubles the memory a hash touches.
const raceEnabled = true
