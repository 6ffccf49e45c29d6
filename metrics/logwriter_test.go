package metrics_test

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/tasksim/tasksim/metrics"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// The run starts off the whole second, to show the header keeps milliseconds.
var logStart = time.Date(2026, 1, 5, 9, 0, 0, 250_000_000, time.UTC)

func TestLogHeaderGolden(t *testing.T) {
	var buf bytes.Buffer
	l := metrics.NewLogWriter(&buf, logStart)
	if err := l.Write(metrics.Window{Start: logStart, End: logStart.Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "header.golden")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got := buf.String(); got != string(want) {
		t.Errorf("header:\n%s\nwant (%s):\n%s", got, golden, want)
	}
}

// hdrhistogram-go's own reader reads the log back: same tags, intervals and histograms.
func TestLogReadBack(t *testing.T) {
	r := metrics.NewRecorder(2, logStart)
	var buf bytes.Buffer
	l := metrics.NewLogWriter(&buf, logStart)
	var want []*hdrhistogram.Histogram
	at := logStart
	for n := 1; n <= 4; n++ {
		if n == 3 {
			// a window with nothing recorded writes nothing
			at = at.Add(1500 * time.Millisecond)
			if err := l.Write(r.Flush(at)); err != nil {
				t.Fatal(err)
			}
			continue
		}
		for i := range 100 * n {
			s := r.Shard(i % 2)
			s.RecordDuration(metrics.LatencyTasksGet, time.Duration(i+1)*137*time.Microsecond)
			if n%2 == 0 {
				s.Record(metrics.PollsPerTask, int64(i%17))
				s.RecordPollAmplification(int64(i%5+1), 2)
			}
		}
		at = at.Add(time.Second + 7*time.Millisecond)
		w := r.Flush(at)
		if err := l.Write(w); err != nil {
			t.Fatal(err)
		}
		for _, hh := range w.Hists {
			if hh != nil {
				want = append(want, hh)
			}
		}
	}
	text := buf.String()

	rd := hdrhistogram.NewHistogramLogReader(strings.NewReader(text))
	var got []*hdrhistogram.Histogram
	for {
		hh, err := rd.NextIntervalHistogram()
		if err != nil {
			t.Fatal(err)
		}
		if hh == nil {
			break
		}
		got = append(got, hh)
	}
	if len(got) != len(want) || len(want) != 7 {
		t.Fatalf("read %d histograms, wrote %d (want 7):\n%s", len(got), len(want), text)
	}
	for i, g := range got {
		w := want[i]
		if g.Tag() != w.Tag() || g.TotalCount() != w.TotalCount() || !g.Equals(w) {
			t.Errorf("#%d: read %s (%d values), wrote %s (%d values); equal %v", i, g.Tag(), g.TotalCount(), w.Tag(), w.TotalCount(), g.Equals(w))
		}
		// The reader computes absolute times in float seconds: allow 1 ms.
		if d := g.StartTimeMs() - w.StartTimeMs(); d < -1 || d > 1 {
			t.Errorf("#%d %s: read start %d ms, wrote %d", i, g.Tag(), g.StartTimeMs(), w.StartTimeMs())
		}
		if d := g.EndTimeMs() - w.EndTimeMs(); d < -1 || d > 1 {
			t.Errorf("#%d %s: read end %d ms, wrote %d", i, g.Tag(), g.EndTimeMs(), w.EndTimeMs())
		}
	}

	// Interval_Max is in the reported unit.
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "Tag=") {
			continue
		}
		f := strings.Split(line, ",")
		h, ok := metrics.ParseHist(strings.TrimPrefix(f[0], "Tag="))
		if !ok || len(f) != 5 {
			t.Fatalf("bad line %q", line)
		}
		hh, err := hdrhistogram.Decode([]byte(f[4]))
		if err != nil {
			t.Fatal(err)
		}
		if want := strconv.FormatFloat(float64(hh.Max())*h.Scale(), 'f', 3, 64); f[3] != want {
			t.Errorf("%s: Interval_Max %s, want %s", h, f[3], want)
		}
	}
}

type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errors.New("disk full")
	}
	f.n--
	return len(p), nil
}

func TestLogWriteErrors(t *testing.T) {
	r := metrics.NewRecorder(1, t0)
	r.Shard(0).Record(metrics.ResultLag, 1)
	w := r.Flush(sec(1))

	l := metrics.NewLogWriter(&failWriter{}, t0) // the header fails
	if err := l.Write(w); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Write after a failed header: %v", err)
	}
	l = metrics.NewLogWriter(&failWriter{n: 1}, t0) // the first window fails
	err := l.Write(w)
	if err == nil {
		t.Fatal("Write to a failing writer returned nil")
	}
	if err2 := l.Write(w); err2 != err {
		t.Errorf("second Write returned %v, want the first error %v", err2, err)
	}
}
