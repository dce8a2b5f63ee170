// Command tlogverify audits the service's khipu ledger as a C2SP transparency log with nothing but
// Go's reference implementation (golang.org/x/mod/sumdb/note and sumdb/tlog): the signed checkpoint,
// its consistency with an earlier one, inclusion of sampled entries read from the served tiles and
// entry bundles, and the per-receipt C2SP tlog-proof bundles. It prints a short report and exits 1
// on any failure, 2 on bad usage.
package main

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

const height = 8 // C2SP tlog-tiles: 256 hashes per tile

var errNotFound = errors.New("404 Not Found")

var client = &http.Client{Timeout: 30 * time.Second}

func get(url string) ([]byte, error) {
	res, err := client.Get(url)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if res.StatusCode == http.StatusNotFound {
		return nil, fmt.Errorf("GET %s: %w", url, errNotFound)
	}
	if err == nil && res.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s", url, res.Status)
	}
	return body, err
}

// openCheckpoint verifies a checkpoint note with the log's key and parses its origin, size and root.
func openCheckpoint(msg []byte, v note.Verifier) (tlog.Tree, error) {
	// note.Open ignores signatures by unknown keys (the service's ECDSA one) and needs one that verifies
	n, err := note.Open(msg, note.VerifierList(v))
	if err != nil {
		return tlog.Tree{}, fmt.Errorf("checkpoint signature: %w", err)
	}
	lines := strings.SplitN(n.Text, "\n", 4)
	if len(lines) < 4 {
		return tlog.Tree{}, fmt.Errorf("checkpoint has fewer than 3 lines: %q", n.Text)
	}
	if lines[0] != v.Name() {
		return tlog.Tree{}, fmt.Errorf("checkpoint origin %q is not the key's name %q", lines[0], v.Name())
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || size < 0 {
		return tlog.Tree{}, fmt.Errorf("checkpoint size %q", lines[1])
	}
	root, err := tlog.ParseHash(lines[2])
	return tlog.Tree{N: size, Hash: root}, err
}

// httpTiles is a tlog.TileReader over the service's C2SP tile routes, counting what it fetches.
type httpTiles struct {
	base    string
	fetched map[string]int
	cache   map[tlog.Tile][]byte
	bundles map[int64][][]byte
}

func (r *httpTiles) Height() int { return height }

// SaveTiles keeps nothing: every run re-reads the log, so nothing unverified can persist.
func (r *httpTiles) SaveTiles([]tlog.Tile, [][]byte) {}

// fetch GETs a tile by its C2SP path: sumdb's tile/8/L/N and tile/8/data/N are tile/L/N and tile/entries/N.
func (r *httpTiles) fetch(t tlog.Tile) ([]byte, tlog.Tile, error) {
	path := func(t tlog.Tile) string {
		return strings.Replace(strings.Replace(t.Path(), "tile/8/", "tile/", 1), "tile/data/", "tile/entries/", 1)
	}
	body, err := get(r.base + "/ledger/" + path(t))
	if errors.Is(err, errNotFound) && t.W < 1<<height {
		// a log may drop a partial tile once it has filled it; the full tile begins with the same data
		t.W = 1 << height
		body, err = get(r.base + "/ledger/" + path(t))
	}
	r.fetched[strings.SplitN(path(t), "/", 3)[1]]++
	return body, t, err
}

func (r *httpTiles) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	data := make([][]byte, len(tiles))
	for i, t := range tiles {
		// tiles are immutable, and what tlog reads from them is checked against a signed root anyway
		if data[i] = r.cache[t]; data[i] != nil {
			continue
		}
		body, got, err := r.fetch(t)
		if err != nil {
			return nil, err
		}
		if len(body) != got.W*tlog.HashSize {
			return nil, fmt.Errorf("tile %s: %d bytes, want %d", got.Path(), len(body), got.W*tlog.HashSize)
		}
		data[i] = body[:t.W*tlog.HashSize]
		r.cache[t] = data[i]
	}
	return data, nil
}

// entry returns the logged data of record i in a tree of size n, from its (cached) entry bundle.
func (r *httpTiles) entry(i, n int64) ([]byte, error) {
	k := i >> height
	if r.bundles[k] == nil {
		t := tlog.Tile{H: height, L: -1, N: k, W: 1 << height}
		if rest := n - k<<height; rest < 1<<height {
			t.W = int(rest)
		}
		body, got, err := r.fetch(t)
		if err != nil {
			return nil, err
		}
		var entries [][]byte
		for len(body) >= 2 && len(body) >= 2+int(binary.BigEndian.Uint16(body)) {
			size := 2 + int(binary.BigEndian.Uint16(body))
			entries, body = append(entries, body[2:size]), body[size:]
		}
		if len(body) != 0 || len(entries) != got.W {
			return nil, fmt.Errorf("entry bundle %s: %d whole entries and %d stray bytes, want %d entries", got.Path(), len(entries), len(body), got.W)
		}
		r.bundles[k] = entries
	}
	return r.bundles[k][i-k<<height], nil
}

// consistent proves with hashes read from the newer tree's tiles that old is a prefix of it.
func consistent(old, cur tlog.Tree, tiles tlog.TileReader) (int, error) {
	if old.N > cur.N {
		return 0, fmt.Errorf("tree of size %d is older than one of size %d: the log rolled back", cur.N, old.N)
	}
	if old.N == 0 {
		return 0, nil // the empty tree is a prefix of every tree
	}
	p, err := tlog.ProveTree(cur.N, old.N, tlog.TileHashReader(cur, tiles))
	if err == nil {
		err = tlog.CheckTree(p, cur.N, cur.Hash, old.N, old.Hash)
	}
	return len(p), err
}

// checkBundle verifies the C2SP tlog-proof the service serves for record i, whose data is entry.
func checkBundle(tiles *httpTiles, v note.Verifier, cur tlog.Tree, i int64, entry []byte) error {
	body, err := get(fmt.Sprintf("%s/receipt/proof?index=%d", tiles.base, i))
	if err != nil {
		return err
	}
	head, cp, ok := strings.Cut(string(body), "\n\n")
	lines := strings.Split(head, "\n")
	if !ok || lines[0] != "c2sp.org/tlog-proof@v1" {
		return fmt.Errorf("tlog-proof %d: not a c2sp.org/tlog-proof@v1 bundle", i)
	}
	if lines = lines[1:]; len(lines) > 0 && strings.HasPrefix(lines[0], "extra ") {
		// unauthenticated, so never trusted: the service documents it as the logged entry, so it must match
		if extra := strings.TrimPrefix(lines[0], "extra "); extra != base64.StdEncoding.EncodeToString(entry) {
			return fmt.Errorf("tlog-proof %d: extra %s is not the logged entry", i, extra)
		}
		lines = lines[1:]
	}
	if want := "index " + strconv.FormatInt(i, 10); len(lines) == 0 || lines[0] != want {
		return fmt.Errorf("tlog-proof %d: no %q line", i, want)
	}
	var proof tlog.RecordProof
	for _, line := range lines[1:] {
		h, err := tlog.ParseHash(line)
		if err != nil {
			return fmt.Errorf("tlog-proof %d: hash %q: %w", i, line, err)
		}
		proof = append(proof, h)
	}
	tree, err := openCheckpoint([]byte(cp), v)
	if err != nil {
		return fmt.Errorf("tlog-proof %d: %w", i, err)
	}
	if err := tlog.CheckRecord(proof, tree.N, tree.Hash, i, tlog.RecordHash(entry)); err != nil {
		return fmt.Errorf("tlog-proof %d: inclusion in its checkpoint (size %d): %w", i, tree.N, err)
	}
	// its checkpoint must belong to the same history as ours, whichever of the two is newer
	older, newer := tree, cur
	if tree.N > cur.N {
		older, newer = cur, tree
	}
	if _, err := consistent(older, newer, tiles); err != nil {
		return fmt.Errorf("tlog-proof %d: its checkpoint (size %d) and ours (size %d): %w", i, tree.N, cur.N, err)
	}
	return nil
}

func run(base, vkey, oldFile string, sample int, bundles bool) error {
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return fmt.Errorf("-vkey: %w", err)
	}
	tiles := &httpTiles{base: strings.TrimRight(base, "/"), fetched: map[string]int{}, cache: map[tlog.Tile][]byte{}, bundles: map[int64][][]byte{}}
	msg, err := get(tiles.base + "/ledger/checkpoint")
	if err != nil {
		return err
	}
	cur, err := openCheckpoint(msg, v)
	if err != nil {
		return err
	}
	fmt.Printf("checkpoint: origin %s size %d root %s (Ed25519 signature verified)\n", v.Name(), cur.N, cur.Hash)

	if oldFile != "" {
		msg, err := os.ReadFile(oldFile)
		if err != nil {
			return err
		}
		old, err := openCheckpoint(msg, v)
		if err != nil {
			return fmt.Errorf("-old %s: %w", oldFile, err)
		}
		n, err := consistent(old, cur, tiles)
		if err != nil {
			return fmt.Errorf("consistency %d -> %d: %w", old.N, cur.N, err)
		}
		fmt.Printf("consistency: size %d -> %d verified (%d proof hashes)\n", old.N, cur.N, n)
	}

	// evenly spaced over the log, so the first and the last record and several tiles are always covered
	var indexes []int64
	for k := 0; k < sample && cur.N > 0; k++ {
		i := int64(0)
		if sample > 1 {
			i = int64(k) * (cur.N - 1) / int64(sample-1)
		}
		if len(indexes) == 0 || indexes[len(indexes)-1] != i {
			indexes = append(indexes, i)
		}
	}
	hashes := tlog.TileHashReader(cur, tiles)
	for _, i := range indexes {
		entry, err := tiles.entry(i, cur.N)
		if err != nil {
			return fmt.Errorf("inclusion of %d: %w", i, err)
		}
		// the log's record is the 32-byte node digest: its RFC 6962 leaf hash is SHA-256(0x00 ‖ digest);
		// the proof is checked against the signed root because x/mod 0.7.0's TileHashReader leaves some
		// child tiles unauthenticated (it skips len(stx) tiles, counting hashes, not tiles)
		proof, err := tlog.ProveRecord(cur.N, i, hashes)
		if err == nil {
			err = tlog.CheckRecord(proof, cur.N, cur.Hash, i, tlog.RecordHash(entry))
		}
		if err != nil {
			return fmt.Errorf("inclusion of %d: %w", i, err)
		}
		if bundles {
			if err := checkBundle(tiles, v, cur, i, entry); err != nil {
				return err
			}
		}
	}
	fmt.Printf("inclusion: %d records verified: %s\n", len(indexes), strings.Trim(fmt.Sprint(indexes), "[]"))
	if bundles {
		fmt.Printf("tlog-proof: %d bundles verified\n", len(indexes))
	}
	fmt.Printf("tiles fetched: level 0: %d, level 1: %d, level 2: %d, entries: %d\n", tiles.fetched["0"], tiles.fetched["1"], tiles.fetched["2"], tiles.fetched["entries"])
	return nil
}

func main() {
	base := flag.String("base", "", "the service's API prefix, e.g. http://127.0.0.1:8080/api/svc/v1 (required)")
	vkey := flag.String("vkey", "", "the log's Ed25519 note verifier key, <origin>+<8 hex>+<base64> (required)")
	old := flag.String("old", "", "a file holding an earlier checkpoint: prove the current one extends it")
	sample := flag.Int("sample", 16, "records whose inclusion is proven, evenly spaced from the first to the last")
	bundles := flag.Bool("bundles", true, "also verify each sampled record's C2SP tlog-proof from /receipt/proof")
	flag.Parse()
	if *base == "" || *vkey == "" || *sample < 0 || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*base, *vkey, *old, *sample, *bundles); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		os.Exit(1)
	}
	fmt.Println("OK")
}
