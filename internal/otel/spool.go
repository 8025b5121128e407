package otel

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// The spool keeps the spans a session could not deliver before it ended,
// one file per session, for the next session that reaches the same
// endpoint (docs/otel.md, docs/RATIONALE.md "OTel spool").
const (
	// maxSpoolFile bounds one session's spool file: its oldest spans are
	// dropped, and counted, to fit.
	maxSpoolFile = 4 << 20
	// maxSpoolDir bounds one endpoint's spool: the oldest files go first.
	maxSpoolDir = 32 << 20
	spoolExt    = ".pb"
	sendingExt  = ".sending" // then -<pid> of the claiming mur
)

// SpoolDir is where the sessions of a MURMUR_HOME spool their undelivered
// spans ("" for no home: undelivered spans are dropped and counted).
func SpoolDir(murmurHome string) string {
	if murmurHome == "" {
		return ""
	}
	return filepath.Join(murmurHome, "otel", "spool")
}

// spool is one endpoint's spool directory: root/<sha256(traces URL)[:16]>,
// so spans go only to the endpoint they were meant for.
type spool struct{ dir string }

func newSpool(root, tracesURL string) *spool {
	if root == "" {
		return nil
	}
	h := sha256.Sum256([]byte(tracesURL))
	return &spool{dir: filepath.Join(root, hex.EncodeToString(h[:8]))}
}

// spooled is one claimed spool file and its spans.
type spooled struct {
	path string
	rs   []*tracepb.ResourceSpans
}

// write stores rs as one new spool file (written whole to a temporary
// name, then renamed, so a reader never sees half a file), keeps
// the file under maxSpoolFile by dropping its oldest spans and the
// directory under maxSpoolDir by removing its oldest files. It returns the
// file, the spans dropped to fit, and the older files removed.
func (s *spool) write(rs []*tracepb.ResourceSpans) (path string, dropped int, removed []string, err error) {
	dropped = trim(rs, maxSpoolFile)
	b, err := proto.Marshal(&coltrace.ExportTraceServiceRequest{ResourceSpans: rs})
	if err != nil {
		return "", dropped, nil, err
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return "", dropped, nil, err
	}
	f, err := os.CreateTemp(s.dir, ".tmp-*")
	if err != nil {
		return "", dropped, nil, err
	}
	// Not synced: fsync cost 12.9 ms a file on this machine's disk (4 %
	// of a 0.3 s session; BenchmarkSpoolWrite), and the rename alone makes
	// the file whole or absent for a mur that is killed. A power loss may
	// lose it, as it would the spans still in memory.
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	// The name sorts by time, so the oldest files are found and sent first.
	path = filepath.Join(s.dir, fmt.Sprintf("%020d-%d%s", time.Now().UnixNano(), os.Getpid(), spoolExt))
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return "", dropped, nil, err
	}
	return path, dropped, s.bound(path), nil
}

// bound removes the oldest spool files, never keep, until the directory
// holds at most maxSpoolDir bytes.
func (s *spool) bound(keep string) []string {
	files, total := s.files()
	var removed []string
	for _, f := range files {
		if total <= maxSpoolDir {
			break
		}
		if f.path == keep {
			continue
		}
		if os.Remove(f.path) == nil {
			total -= f.size
			removed = append(removed, f.path)
		}
	}
	return removed
}

type spoolFile struct {
	path string
	size int64
}

// files lists the spool's unclaimed files, oldest first, and their size.
func (s *spool) files() ([]spoolFile, int64) {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, 0
	}
	var out []spoolFile
	var total int64
	for _, e := range ents {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), spoolExt) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		out = append(out, spoolFile{filepath.Join(s.dir, e.Name()), info.Size()})
		total += info.Size()
	}
	slices.SortFunc(out, func(a, b spoolFile) int { return strings.Compare(a.path, b.path) })
	return out, total
}

// claim takes every spool file for this session, oldest first: renaming
// it to <name>.sending-<pid> is atomic, so of two sessions that reach the
// endpoint together only one sends it. A file claimed by a mur that is no
// longer running (killed before it sent it) is claimed again. A file that
// is not a spool (too large, or not an OTLP request) is renamed
// <name>.bad and reported in bad.
func (s *spool) claim() (got []spooled, bad []string) {
	files, _ := s.files()
	files = append(files, s.orphans()...)
	slices.SortFunc(files, func(a, b spoolFile) int { return strings.Compare(a.path, b.path) })
	for _, f := range files {
		base := f.path
		if i := strings.LastIndex(base, sendingExt); i > 0 {
			base = base[:i]
		}
		sending := base + sendingExt + "-" + strconv.Itoa(os.Getpid())
		if os.Rename(f.path, sending) != nil {
			continue // another session claimed it
		}
		f.path = base
		var req coltrace.ExportTraceServiceRequest
		b, err := readBounded(sending, 2*maxSpoolFile)
		if err == nil {
			err = proto.Unmarshal(b, &req)
		}
		if err != nil {
			os.Rename(sending, f.path+".bad")
			bad = append(bad, f.path+".bad")
			continue
		}
		got = append(got, spooled{path: sending, rs: req.ResourceSpans})
	}
	return got, bad
}

// orphans are the claimed files whose claiming process is gone.
func (s *spool) orphans() []spoolFile {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return nil
	}
	var out []spoolFile
	for _, e := range ents {
		i := strings.LastIndex(e.Name(), spoolExt+sendingExt+"-")
		if i < 0 || !e.Type().IsRegular() {
			continue
		}
		pid, err := strconv.Atoi(e.Name()[i+len(spoolExt+sendingExt+"-"):])
		// Signal 0 checks the process exists; EPERM means it does.
		if err != nil || pid <= 0 || syscall.Kill(pid, 0) != syscall.ESRCH {
			continue
		}
		out = append(out, spoolFile{path: filepath.Join(s.dir, e.Name())})
	}
	return out
}

// unclaim gives a claimed file back to the spool.
func (s *spool) unclaim(f spooled) {
	if i := strings.LastIndex(f.path, sendingExt+"-"); i > 0 {
		os.Rename(f.path, f.path[:i])
	}
}

func readBounded(path string, limit int64) ([]byte, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if info.Size() > limit {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%d bytes, over the spool's bound of %d", info.Size(), limit)}
	}
	return os.ReadFile(path)
}

// countSpans is how many spans rs holds.
func countSpans(rs []*tracepb.ResourceSpans) int {
	n := 0
	for _, r := range rs {
		for _, ss := range r.GetScopeSpans() {
			n += len(ss.GetSpans())
		}
	}
	return n
}

// trim drops the oldest spans of rs (they come in export order) until
// their encoding fits in limit bytes, and returns how many it dropped.
func trim(rs []*tracepb.ResourceSpans, limit int) int {
	if proto.Size(&coltrace.ExportTraceServiceRequest{ResourceSpans: rs}) <= limit {
		return 0
	}
	// Keep the newest spans that fit, counting each span's size once
	// (plus a margin for the resource and scope around them).
	budget := limit - 64<<10
	dropped := 0
	for i := len(rs) - 1; i >= 0; i-- {
		for j := len(rs[i].ScopeSpans) - 1; j >= 0; j-- {
			ss := rs[i].ScopeSpans[j]
			k := len(ss.Spans)
			for k > 0 && budget-proto.Size(ss.Spans[k-1]) >= 0 {
				budget -= proto.Size(ss.Spans[k-1]) + 8
				k--
			}
			if k > 0 {
				budget = -1
			}
			dropped += k
			ss.Spans = ss.Spans[k:]
		}
	}
	return dropped
}
