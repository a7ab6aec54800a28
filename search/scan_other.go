//go:build !linux

// This file stats the files a Scan finds where fstatat is not used: through the folder's
// os.Root.

package search

func (f ScanFile) lstat() (ScanStat, error) {
	fi, err := f.Dir.Lstat(f.Name)
	if err != nil {
		return ScanStat{}, err
	}
	return ScanStat{Mode: fi.Mode(), Size: fi.Size(), MTime: fi.ModTime().UnixNano()}, nil
}
