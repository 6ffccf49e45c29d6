package results

import (
	"fmt"
	"os"
	"path/filepath"
)

// CheckMergeDirs checks, before MergeRuns reads anything, the directories of a merge as
// `tasksim merge` is given them: out is none of the shards' directories (the merge would
// write over a shard it reads: a *MismatchError, Field "out"), and each shard directory
// exists and is a directory (an error naming it).
func CheckMergeDirs(dirs []string, out string) error {
	for _, d := range dirs {
		if filepath.Clean(d) == filepath.Clean(out) {
			return &MismatchError{Field: "out", Msg: fmt.Sprintf("--out %s is one of the shards' directories: give another", out)}
		}
		if st, err := os.Stat(d); err != nil {
			return fmt.Errorf("run directory %s: %w", d, unwrapPath(err))
		} else if !st.IsDir() {
			return fmt.Errorf("run directory %s: not a directory", d)
		}
	}
	return nil
}
