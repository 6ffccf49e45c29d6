package tasksim_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// mdLink is a Markdown link's target: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// citation is a page of this repository cited by path and anchor in code, manifests or
// scripts (docs/METRICS.md#detection_lag), resolved from the module root.
var citation = regexp.MustCompile(`\b((?:docs/[A-Z]+|README)\.md)#([A-Za-z0-9_-]+)`)

// anchorID is an explicit anchor, <a id="...">.
var anchorID = regexp.MustCompile(`<a id="([^"]+)">`)

// TestDocLinksResolve: every link of README.md and docs/*.md to a file of the repository
// names a file that exists, and every anchor it names exists in that page; so does every
// page and anchor of docs/ or the README that Go code, manifests, scenarios and scripts cite
// by path.
// Moving a section between pages without repointing what cites it fails here.
func TestDocLinksResolve(t *testing.T) {
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]map[string]bool{} // page, slash-separated from the root -> anchors
	pageAnchors := func(page string) map[string]bool {
		if a, ok := anchors[page]; ok {
			return a
		}
		b, err := os.ReadFile(filepath.FromSlash(page))
		if err != nil {
			return nil
		}
		anchors[page] = markdownAnchors(string(b))
		return anchors[page]
	}
	for _, page := range append([]string{"README.md"}, pages...) {
		page = filepath.ToSlash(page)
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			dest := page
			if file != "" {
				dest = filepath.ToSlash(filepath.Join(filepath.Dir(page), file))
			}
			if _, err := os.Stat(dest); err != nil {
				t.Errorf("%s links to %s, which does not exist", page, target)
				continue
			}
			if anchor != "" && strings.HasSuffix(dest, ".md") && !pageAnchors(dest)[anchor] {
				t.Errorf("%s links to %s: %s has no anchor %q", page, target, dest, anchor)
			}
		}
	}
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == ".git" || name == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if !citingFile(path) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range citation.FindAllStringSubmatch(string(b), -1) {
			if a := pageAnchors(m[1]); a == nil {
				t.Errorf("%s cites %s#%s: no such page", path, m[1], m[2])
			} else if !a[m[2]] {
				t.Errorf("%s cites %s#%s: the page has no such anchor", path, m[1], m[2])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// citingFile reports whether path is a file whose citations of pages are checked: Go
// sources, the commands' help texts, manifests and scenarios, scripts. Markdown links are
// checked above; captured wire data under testdata is not ours to cite from.
func citingFile(path string) bool {
	slash := filepath.ToSlash(path)
	if strings.Contains(slash, "/testdata/sse/") {
		return false
	}
	switch filepath.Ext(path) {
	case ".go", ".yaml", ".yml", ".sh", ".mjs":
		return true
	case ".txt":
		return strings.HasPrefix(slash, "cmd/tasksim/help/")
	}
	return slash == ".ci/run" || slash == "Dockerfile"
}

// markdownAnchors returns the anchors of a Markdown page: its explicit <a id> anchors and the
// ids GitHub gives its headings (lower case, punctuation dropped, spaces as hyphens; a
// repeated heading gets -1, -2, ...).
func markdownAnchors(page string) map[string]bool {
	a := map[string]bool{}
	for _, m := range anchorID.FindAllStringSubmatch(page, -1) {
		a[m[1]] = true
	}
	seen := map[string]int{}
	inCode := false
	for _, line := range strings.Split(page, "\n") {
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
			continue
		}
		if inCode || !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var slug strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case r == ' ':
				slug.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
				slug.WriteRune(r)
			}
		}
		id := slug.String()
		if n := seen[id]; n > 0 {
			a[id+"-"+strconv.Itoa(n)] = true
		} else {
			a[id] = true
		}
		seen[id]++
	}
	return a
}
