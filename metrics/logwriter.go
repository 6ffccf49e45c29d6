package metrics

import (
	"fmt"
	"io"
	"strconv"
	"time"
)

// LogWriter writes windows as an HdrHistogram interval log (log format version 1.3), the
// file histograms.hlog: the header Java's HistogramLogWriter writes, then one line per
// histogram of each window,
//
//	Tag=<hist name>,<start s>,<length s>,<max>,<V2 compressed histogram, base64>
//
// Start is seconds since the BaseTime of the header, the run's start; max is the
// interval's highest value in the reported unit (ms, count or ratio), as Java reports
// nanosecond logs in ms. Values inside the histograms are in the recorded unit (us,
// count, 1/1000): run HistogramLogProcessor with -outputValueUnitRatio 1000 for ms.
// hdrhistogram-go's HistogramLogReader and Java's HistogramLogReader read it back.
//
// hdrhistogram-go's own HistogramLogWriter is not used: it writes StartTime and BaseTime
// in whole seconds (losing the run start's milliseconds) and scales the max by 1e6 only.
type LogWriter struct {
	w      io.Writer
	baseMs int64  // the run's start, ms since the epoch
	buf    []byte // one window's lines, reused
	enc    v2Encoder
	err    error // the first error; every later Write returns it
}

// NewLogWriter writes the log header to w and returns a writer of windows for a run that
// started at start. An error writing the header is returned by the first Write.
func NewLogWriter(w io.Writer, start time.Time) *LogWriter {
	l := &LogWriter{w: w, baseMs: start.UnixMilli()}
	b := make([]byte, 0, 1024)
	b = append(b, "#[Logged with tasksim metrics]\n"...)
	b = append(b, "#[Histogram log format version 1.3]\n"...)
	b = append(b, "#[StartTime: "...)
	b = appendSeconds(b, l.baseMs)
	b = append(b, " (seconds since epoch), "...)
	b = start.UTC().AppendFormat(b, "2006-01-02T15:04:05.000Z07:00")
	b = append(b, "]\n#[BaseTime: "...)
	b = appendSeconds(b, l.baseMs)
	b = append(b, " (seconds since epoch)]\n"...)
	b = append(b, "#[Values: us (durations), count (polls_per_task), 1/1000 (poll_amplification);"+
		" Interval_Max in ms, count, ratio]\n"...)
	b = append(b, `"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"`+"\n"...)
	if _, err := w.Write(b); err != nil {
		l.err = fmt.Errorf("metrics: writing interval log header: %w", err)
	}
	l.buf = b[:0]
	return l
}

// Write appends win to the log: one tagged line per non-empty histogram, in Hist order, in
// one write to the underlying writer. A window with no values writes nothing.
func (l *LogWriter) Write(win Window) error {
	if l.err != nil {
		return l.err
	}
	startMs := max(win.Start.UnixMilli()-l.baseMs, 0)
	lengthMs := max(win.End.UnixMilli()-win.Start.UnixMilli(), 0)
	b := l.buf[:0]
	for h, hh := range win.Hists {
		if hh == nil || hh.TotalCount() == 0 {
			continue
		}
		b = append(b, "Tag="...)
		b = append(b, Hist(h).Name()...)
		b = append(b, ',')
		b = appendSeconds(b, startMs)
		b = append(b, ',')
		b = appendSeconds(b, lengthMs)
		b = append(b, ',')
		b = strconv.AppendFloat(b, float64(histMax(hh))*Hist(h).Scale(), 'f', 3, 64)
		b = append(b, ',')
		b = l.enc.encode(b, hh)
		b = append(b, '\n')
	}
	l.buf = b
	if len(b) == 0 {
		return nil
	}
	if _, err := l.w.Write(b); err != nil {
		l.err = fmt.Errorf("metrics: writing interval log: %w", err)
	}
	return l.err
}

// appendSeconds appends ms as seconds with exactly three decimals ("1767603600.250"),
// without going through a float.
func appendSeconds(b []byte, ms int64) []byte {
	if ms < 0 {
		b = append(b, '-')
		ms = -ms
	}
	b = strconv.AppendInt(b, ms/1000, 10)
	frac := ms % 1000
	return append(b, '.', byte('0'+frac/100), byte('0'+frac/10%10), byte('0'+frac%10))
}
