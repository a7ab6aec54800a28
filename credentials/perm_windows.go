// This file is perm_unix.go for Windows. Windows reports no owner in a FileInfo and mode
// bits that say nothing of who may read a file (0666 for every writable file): the file's
// privacy there is the ACL of the user's profile folder it lives in, which pid does not
// check. Links are refused as on Unix (credentials.go).

package credentials

import "io/fs"

// notPrivate returns "": see the top of this file.
func notPrivate(string, fs.FileInfo) string { return "" }

// notOwned returns "": the owner is unknown here.
func notOwned(fs.FileInfo) string { return "" }

// privateFolder does nothing here.
func privateFolder(string) (bool, error) { return false, nil }
