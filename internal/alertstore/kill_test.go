package alertstore_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const childEnv = "CASESTORE_KILL9_CHILD_DB"

// TestKill9 kills a real process with SIGKILL while it feeds the script
// through a Monitor backed by the case store, then restarts on the same file,
// replays every reading (as the ingest would from its durable store) and
// expects exactly the alerts and transitions of an uninterrupted run: no
// duplicate, no loss, same ids.
func TestKill9(t *testing.T) {
	if path := os.Getenv(childEnv); path != "" {
		killChild(t, path)
		return
	}
	if testing.Short() {
		t.Skip("subprocess test skipped with -short")
	}
	rs := script()
	ref := newHarness(t, filepath.Join(t.TempDir(), "ref.db"))
	ref.feed(rs)
	want := ref.dump()
	ref.stop(true)

	for _, cut := range []int{35, 60, 100} {
		t.Run(fmt.Sprintf("after %d readings", cut), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "cases.db")
			cmd := exec.Command(os.Args[0], "-test.run=^TestKill9$")
			cmd.Env = append(os.Environ(), childEnv+"="+path)
			cmd.Stderr = os.Stderr
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			next, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(out)
			killed := false
			for sc.Scan() {
				var n int
				if _, err := fmt.Sscanf(sc.Text(), "fed %d", &n); err != nil {
					continue
				}
				// Let the child feed the next reading; past the cut, kill it
				// while it does.
				fmt.Fprintln(next)
				if n >= cut {
					if err := cmd.Process.Kill(); err != nil {
						t.Fatal(err)
					}
					killed = true
					break
				}
			}
			_ = cmd.Wait()
			if !killed {
				t.Fatalf("child ended before reading %d", cut)
			}
			h := newHarness(t, path)
			defer h.stop(true)
			h.feed(rs)
			if d := cmp.Diff(want, h.dump()); d != "" {
				t.Errorf("after kill -9 and replay (-uninterrupted +restarted):\n%s", d)
			}
		})
	}
}

// killChild feeds the script one reading at a time, announcing each on
// stdout and going on when the parent says so on stdin, and waits to be
// killed; it never flushes or closes the store.
func killChild(t *testing.T, path string) {
	h := newHarness(t, path)
	rs := script()
	in := bufio.NewScanner(os.Stdin)
	for i := range rs {
		h.feed(rs[i : i+1])
		fmt.Printf("fed %d\n", i+1)
		if !in.Scan() {
			return
		}
	}
	fmt.Println("done")
	for in.Scan() { // the parent kills us long before
	}
}
