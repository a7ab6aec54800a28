//go:build !linux

// This file lists a folder where getdents64 is not at hand, through a second descriptor on
// it (see rootfile.Dup), so that no entry costs a stat.

package search

import "os"

// readFolder returns the entries of the open folder f (opened through dir), unsorted.
func readFolder(f *os.File, _ *os.Root) ([]Entry, error) { return readFolderDup(f) }
