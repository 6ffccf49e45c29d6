package results

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tasksim/tasksim/metrics"
)

// The readers of a saved run's files that the report needs beyond ReadSummary.

// ReadHistogramLogTotals reads the run's histograms.hlog and returns, per histogram, the
// merge of all its intervals: the run's totals. Lines of tags that are not a metrics.Hist
// are skipped. The error wraps fs.ErrNotExist when the run has no log.
func ReadHistogramLogTotals(dir string) (map[metrics.Hist]*hdrhistogram.Histogram, error) {
	sections, err := readHistogramLog(dir, 1, func(float64) int { return 0 })
	if err != nil {
		return nil, err
	}
	return sections[0], nil
}

// ReadHistogramLogSections reads the run's histograms.hlog into n sections of equal time
// over the span its intervals cover (from the first interval's start to the last one's
// end: a run that waited for a common start, or ran its contract suite first, logs its
// load from later than its base time): section i holds the intervals that start in its
// i-th n-th. They are the batches of the batch-means intervals of `tasksim compare`
// (comparestat.go). A section without values has an empty map.
func ReadHistogramLogSections(dir string, n int) ([]map[metrics.Hist]*hdrhistogram.Histogram, error) {
	first, end, _, err := HistogramLogSpan(dir)
	if err != nil {
		return nil, err
	}
	return readHistogramLog(dir, n, func(start float64) int {
		if end <= first {
			return 0
		}
		return min(n-1, max(0, int((start-first)/(end-first)*float64(n))))
	})
}

// HistogramLogSpan is the span the intervals of histograms.hlog cover, in seconds since
// its base time (the first interval's start and the last one's end), and the number of
// intervals (distinct starts) in it.
func HistogramLogSpan(dir string) (first, end float64, intervals int, err error) {
	path := filepath.Join(dir, HistogramLogFile)
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("results: %w", err)
	}
	defer f.Close()
	first = math.Inf(1)
	starts := map[float64]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		fields := bytes.SplitN(bytes.TrimPrefix(sc.Bytes(), []byte("Tag=")), []byte(","), 4)
		if !bytes.HasPrefix(sc.Bytes(), []byte("Tag=")) || len(fields) < 4 {
			continue
		}
		start, err1 := strconv.ParseFloat(string(fields[1]), 64)
		length, err2 := strconv.ParseFloat(string(fields[2]), 64)
		if err1 != nil || err2 != nil {
			continue // readHistogramLog reports the line
		}
		first, end = min(first, start), max(end, start+length)
		starts[start] = true
	}
	if err := sc.Err(); err != nil {
		return 0, 0, 0, fmt.Errorf("results: %s: %w", path, err)
	}
	if math.IsInf(first, 1) {
		return 0, 0, 0, nil
	}
	return first, end, len(starts), nil
}

// readHistogramLog reads histograms.hlog into n sets of totals, each interval added to the
// set section gives for its start (seconds since the log's base time).
//
// Intervals with the recorder's geometry (metrics.NewHistogram) are added count by count
// into one array per histogram, without building a histogram per line, so a 10-minute run
// (thousands of lines) merges in milliseconds; any other geometry is decoded and merged.
func readHistogramLog(dir string, n int, section func(start float64) int) ([]map[metrics.Hist]*hdrhistogram.Histogram, error) {
	path := filepath.Join(dir, HistogramLogFile)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	defer f.Close()
	counts := make([][metrics.NumHists][]int64, n)
	other := make([][metrics.NumHists]*hdrhistogram.Histogram, n)
	var dec hlogDecoder
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for line := 1; sc.Scan(); line++ {
		text := sc.Bytes()
		if !bytes.HasPrefix(text, []byte("Tag=")) {
			continue // header, comment or untagged line
		}
		fields := bytes.SplitN(text[len("Tag="):], []byte(","), 5)
		if len(fields) != 5 {
			return nil, fmt.Errorf("results: %s:%d: want Tag=NAME,start,length,max,histogram", path, line)
		}
		h, ok := metrics.ParseHist(string(fields[0]))
		if !ok {
			continue
		}
		start, err := strconv.ParseFloat(string(fields[1]), 64)
		if err != nil {
			return nil, fmt.Errorf("results: %s:%d: start %q: not a number", path, line, fields[1])
		}
		i := section(start)
		if counts[i][h] == nil {
			counts[i][h] = make([]int64, len(metrics.NewHistogram(h).Export().Counts))
		}
		fast, err := dec.add(counts[i][h], h, fields[4])
		if err == nil && !fast {
			var hh *hdrhistogram.Histogram
			if hh, err = hdrhistogram.Decode(fields[4]); err == nil {
				if other[i][h] == nil {
					other[i][h] = metrics.NewHistogram(h)
				}
				other[i][h].Merge(hh)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("results: %s:%d: %s: %w", path, line, h.Name(), err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("results: %s: %w", path, err)
	}
	out := make([]map[metrics.Hist]*hdrhistogram.Histogram, n)
	for i := range out {
		out[i] = importCounts(&counts[i], &other[i])
	}
	return out, nil
}

// importCounts turns the counts arrays (and the histograms of other geometries) read from
// a log into histograms, one per Hist that received lines.
func importCounts(counts *[metrics.NumHists][]int64, other *[metrics.NumHists]*hdrhistogram.Histogram) map[metrics.Hist]*hdrhistogram.Histogram {
	out := map[metrics.Hist]*hdrhistogram.Histogram{}
	for h := range metrics.NumHists {
		if counts[h] == nil {
			continue
		}
		hh := hdrhistogram.Import(&hdrhistogram.Snapshot{
			LowestTrackableValue: 1, HighestTrackableValue: h.Highest(),
			SignificantFigures: metrics.SigFigs, Counts: counts[h],
		})
		if other[h] != nil {
			hh.Merge(other[h])
		}
		hh.SetTag(h.Name())
		out[h] = hh
	}
	return out
}

// hlogDecoder adds V2 compressed histograms (the format of hdrhistogram-go's EncodeV2 and
// Java's interval logs) into a counts array, reusing its buffers across lines.
//
//	base64( cookie int32 | compressed length int32 | zlib( header | counts ) )
//	header: cookie, payload length, normalizing offset, significant digits (int32 each),
//	        lowest, highest (int64), int-to-double ratio (float64), all big-endian
//	counts: ZigZag LEB128 (at most 9 bytes); a negative value n is a run of -n zeros
type hlogDecoder struct {
	raw     []byte
	payload []byte
	zr      io.ReadCloser
}

const (
	v2CompressedCookie = 0x1c849304
	v2Cookie           = 0x1c849303
	v2HeaderBytes      = 40
)

// add adds the encoded histogram b of h into counts. It returns false, and adds nothing,
// when the histogram's geometry is not the recorder's for h.
func (d *hlogDecoder) add(counts []int64, h metrics.Hist, b []byte) (bool, error) {
	d.raw = slices.Grow(d.raw[:0], base64.StdEncoding.DecodedLen(len(b)))[:base64.StdEncoding.DecodedLen(len(b))]
	n, err := base64.StdEncoding.Decode(d.raw, b)
	if err != nil {
		return false, err
	}
	raw := d.raw[:n]
	if len(raw) < 8 || int32(binary.BigEndian.Uint32(raw))&^0xf0 != v2CompressedCookie {
		return false, errors.New("not a V2 compressed histogram")
	}
	clen := int(binary.BigEndian.Uint32(raw[4:]))
	if clen < 0 || clen > len(raw)-8 {
		return false, errors.New("truncated histogram")
	}
	src := bytes.NewReader(raw[8 : 8+clen])
	if d.zr == nil {
		if d.zr, err = zlib.NewReader(src); err != nil {
			return false, err
		}
	} else if err := d.zr.(zlib.Resetter).Reset(src, nil); err != nil {
		return false, err
	}
	var hdr [v2HeaderBytes]byte
	if _, err := io.ReadFull(d.zr, hdr[:]); err != nil {
		return false, fmt.Errorf("histogram header: %w", err)
	}
	if int32(binary.BigEndian.Uint32(hdr[0:]))&^0xf0 != v2Cookie {
		return false, errors.New("not a V2 histogram")
	}
	plen := int(int32(binary.BigEndian.Uint32(hdr[4:])))
	sig := int32(binary.BigEndian.Uint32(hdr[12:]))
	lo, hi := int64(binary.BigEndian.Uint64(hdr[16:])), int64(binary.BigEndian.Uint64(hdr[24:]))
	if sig != metrics.SigFigs || lo != 1 || hi != h.Highest() {
		return false, nil
	}
	if plen < 0 || plen > 9*len(counts) {
		return false, fmt.Errorf("payload length %d out of range", plen)
	}
	d.payload = slices.Grow(d.payload[:0], plen)[:plen]
	if _, err := io.ReadFull(d.zr, d.payload); err != nil {
		return false, fmt.Errorf("histogram payload: %w", err)
	}
	idx := 0
	for p := d.payload; len(p) > 0; {
		v, n := zigzag(p)
		if n == 0 {
			return false, errors.New("truncated count")
		}
		p = p[n:]
		if v < 0 {
			if -v > int64(len(counts)-idx) || v == math.MinInt64 {
				return false, errors.New("zero run past the end of the counts")
			}
			idx += int(-v)
			continue
		}
		if idx >= len(counts) {
			return false, errors.New("count past the end of the counts")
		}
		counts[idx] += v
		idx++
	}
	return true, nil
}

// zigzag decodes one ZigZag LEB128-64b9B value: up to 8 bytes of 7 bits, then a 9th of 8.
// n is 0 when p ends inside the value.
func zigzag(p []byte) (v int64, n int) {
	var u uint64
	for i := 0; i < 9; i++ {
		if i >= len(p) {
			return 0, 0
		}
		if i == 8 {
			u |= uint64(p[i]) << 56
			n = 9
			break
		}
		u |= uint64(p[i]&0x7f) << (7 * i)
		if p[i]&0x80 == 0 {
			n = i + 1
			break
		}
	}
	return int64(u>>1) ^ -int64(u&1), n
}

// timeseries holds the columns of timeseries.csv by name; an empty cell is NaN.
type timeseries struct {
	cols map[string][]float64
	rows int
}

// col returns the column name, or nil when the file has no such column.
func (t *timeseries) col(name string) []float64 { return t.cols[name] }

// readTimeseries reads timeseries.csv; columns are found by their header name, so files
// with more (or fewer) columns still read.
func readTimeseries(dir string) (*timeseries, error) {
	path := filepath.Join(dir, TimeseriesFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	r := csv.NewReader(bytes.NewReader(b))
	r.ReuseRecord = true
	head, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("results: %s: %w", path, err)
	}
	names := slices.Clone(head)
	t := &timeseries{cols: make(map[string][]float64, len(names))}
	for line := 2; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("results: %s: %w", path, err)
		}
		for i, name := range names {
			v := math.NaN()
			if rec[i] != "" {
				if v, err = strconv.ParseFloat(rec[i], 64); err != nil {
					return nil, fmt.Errorf("results: %s:%d: %s: %w", path, line, name, err)
				}
			}
			t.cols[name] = append(t.cols[name], v)
		}
		t.rows++
	}
	return t, nil
}

// faultEvent is one row of events.csv, as the report uses it.
type faultEvent struct {
	OffsetS float64 // seconds since the run's start
	Key     string  // "source.kind"
}

// faultLog is a run's events.csv.
type faultLog struct {
	events      []faultEvent
	moreNotKept int64 // events counted but not kept (the last row)
}

// readFaultEvents reads events.csv (see WriteEvents).
func readFaultEvents(dir string) (*faultLog, error) {
	path := filepath.Join(dir, EventsFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("results: %s: %w", path, err)
	}
	l := &faultLog{}
	for i, r := range rows {
		if i == 0 || len(r) != len(eventsHeader) {
			continue
		}
		if r[3] == "more_not_kept" {
			l.moreNotKept, _ = strconv.ParseInt(r[4], 10, 64)
			continue
		}
		off, err := strconv.ParseFloat(r[1], 64)
		if err != nil {
			return nil, fmt.Errorf("results: %s:%d: offset_s %q: %w", path, i+1, r[1], err)
		}
		l.events = append(l.events, faultEvent{OffsetS: off, Key: r[2] + "." + r[3]})
	}
	return l, nil
}
