package evidence

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// checkTagManifest: every tag file except the signature is listed, each
// hash right.
func (b *bagFiles) checkTagManifest(tagm []byte) {
	isListedTag := func(name string) bool {
		return !strings.HasPrefix(name, "data/") && name != sigName && name != "tagmanifest-sha256.txt"
	}
	listed := checkManifest(b.rep, "tagmanifest-sha256.txt", tagm, isListedTag, b.files, func(name string) (string, error) {
		d, err := b.read(name, maxTagBytes)
		if err != nil {
			return "", err
		}
		s := sha256.Sum256(d)
		return hex.EncodeToString(s[:]), nil
	})
	for name := range b.files {
		if isListedTag(name) && !listed[name] {
			b.rep.add("arquivo de controle %s não consta de tagmanifest-sha256.txt (arquivo acrescentado)", name)
		}
	}
	for _, need := range []string{"bag-info.txt", "bagit.txt", "manifest-sha256.txt", verificarTxt} {
		if b.files[need] != nil && !listed[need] {
			return // reported above
		}
	}
}

// checkPayload: every data/ file is listed, each hash right, nothing else
// in the bag, and Payload-Oxum matches what was read. The gateway batches
// are checked while the payload is still being read (see batchStream).
func (b *bagFiles) checkPayload(manifest []byte, fields map[string][]string, haveInfo bool) {
	var octets atomic.Int64
	listed := b.checkManifestParallel("manifest-sha256.txt", manifest, func(name string) bool { return strings.HasPrefix(name, "data/") },
		b.prepare, func(name string) (string, error) {
			c, sum, err := b.hashPayload(name)
			octets.Add(c)
			return sum, err
		})
	for name := range b.files {
		if strings.HasPrefix(name, "data/") && !listed[name] {
			b.rep.add("arquivo %s não consta de manifest-sha256.txt (arquivo acrescentado)", name)
		}
		if !strings.HasPrefix(name, "data/") && !isTag(name) {
			b.rep.add("arquivo %s não faz parte do pacote (arquivo acrescentado)", name)
		}
	}
	n := octets.Load()
	b.rep.PayloadFiles, b.rep.PayloadBytes = len(listed), n
	if ox := fields["Payload-Oxum"]; len(ox) == 1 {
		if want := fmt.Sprintf("%d.%d", n, len(listed)); ox[0] != want {
			b.rep.add("Payload-Oxum em bag-info.txt diz %s, mas o conteúdo tem %s (bytes.arquivos)", ox[0], want)
		}
	} else if haveInfo {
		b.rep.add("bag-info.txt sem Payload-Oxum")
	}
}

func isTag(name string) bool {
	switch name {
	case "bagit.txt", "bag-info.txt", "manifest-sha256.txt", "tagmanifest-sha256.txt", sigName, verificarTxt:
		return true
	}
	return false
}

// checkManifestParallel is checkManifest hashing two files at a time
// (the largest first: the readings and the batches are most of a bag),
// after calling before with the names of the files it will hash.
func (b *bagFiles) checkManifestParallel(mname string, data []byte, allowed func(string) bool, before func(names []string),
	sum func(string) (string, error)) map[string]bool {
	rep := b.rep
	type job struct {
		name, want string
		got        string
		err        error
	}
	var jobs []*job
	listed := checkManifest(rep, mname, data, allowed, b.files, func(name string) (string, error) {
		return "", errDeferred
	}, func(name, want string) { jobs = append(jobs, &job{name: name, want: want}) })
	names := make([]string, len(jobs))
	for i, j := range jobs {
		names[i] = j.name
	}
	before(names)
	order := slices.Clone(jobs)
	slices.SortStableFunc(order, func(x, y *job) int { return cmp.Compare(b.sizes[y.name], b.sizes[x.name]) })
	next := make(chan *job)
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for j := range next {
				j.got, j.err = sum(j.name)
			}
		})
	}
	for _, j := range order {
		next <- j
	}
	close(next)
	wg.Wait()
	for _, j := range jobs {
		switch {
		case j.err != nil:
			rep.add("%s ilegível ou corrompido: %v", j.name, j.err)
		case j.got != j.want:
			rep.add("%s foi alterado: SHA-256 %s, esperado %s (%s)", j.name, j.got[:16]+"…", j.want[:16]+"…", mname)
		}
	}
	return listed
}

var errDeferred = errors.New("deferred")

// checkManifest parses a manifest and checks each listed file with sum
// (or hands it to deferred, when given).
func checkManifest(rep *Report, mname string, data []byte, allowed func(string) bool, files map[string]opener,
	sum func(string) (string, error), deferred ...func(name, want string)) map[string]bool {
	listed := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	ln := 0
	for sc.Scan() {
		ln++
		line := sc.Text()
		want, name, ok := strings.Cut(line, "  ")
		if !ok || len(want) != 64 || !isHex(want) || name == "" {
			rep.add("%s, linha %d: formato inválido (esperado \"<sha256>  <arquivo>\")", mname, ln)
			continue
		}
		if !allowed(name) {
			rep.add("%s, linha %d: %q não pertence a este manifesto", mname, ln, name)
			continue
		}
		if listed[name] {
			rep.add("%s, linha %d: %s listado duas vezes", mname, ln, name)
			continue
		}
		listed[name] = true
		if files[name] == nil {
			rep.add("falta o arquivo %s listado em %s (arquivo removido ou renomeado)", name, mname)
			continue
		}
		if len(deferred) > 0 {
			deferred[0](name, want)
			continue
		}
		got, err := sum(name)
		if err != nil {
			rep.add("%s ilegível ou corrompido: %v", name, err)
			continue
		}
		if got != want {
			rep.add("%s foi alterado: SHA-256 %s, esperado %s (%s)", name, got[:16]+"…", want[:16]+"…", mname)
		}
	}
	if err := sc.Err(); err != nil {
		rep.add("%s ilegível: %v", mname, err)
	}
	return listed
}

func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}

func parseInfo(b []byte) map[string][]string {
	out := map[string][]string{}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok {
			out[strings.TrimSpace(k)] = append(out[strings.TrimSpace(k)], strings.TrimSpace(v))
		}
	}
	return out
}
