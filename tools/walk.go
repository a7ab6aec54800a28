// This file walks a folder tree for grep and find: in name order, skipping .git and what
// .gitignore files exclude, never following symbolic links.

package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// visitFunc is called for every entry a walk visits, with its real path and its path
// relative to the walk's root (slash-separated). Returning fs.SkipDir for a folder skips
// its content; fs.SkipAll ends the walk without error; another error ends it with that
// error.
type visitFunc func(real, rel string, d fs.DirEntry) error

// walk visits everything under the folder root (a real path), depth first in name order.
// It skips .git, entries ignored by the .gitignore files of root, of its subfolders and of
// its parents up to the repository (the nearest folder holding .git) or the workspace
// folder, whichever is nearer. Symbolic links are visited but not followed; folders that
// cannot be read are skipped. It stops with ctx's error when ctx is done.
func (ws *Workspace) walk(ctx context.Context, root string, visit visitFunc) error {
	err := walkDir(ctx, root, "", ws.parentIgnores(root), visit)
	if errors.Is(err, fs.SkipAll) {
		return nil
	}
	return err
}

func walkDir(ctx context.Context, dir, rel string, stack ignoreStack, visit visitFunc) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	if data, err := os.ReadFile(filepath.Join(dir, ".gitignore")); err == nil {
		stack = stack.with(parseIgnore(dir, data))
	}
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		name := e.Name()
		if name == ".git" {
			continue
		}
		p := filepath.Join(dir, name)
		r := name
		if rel != "" {
			r = rel + "/" + name
		}
		isDir := e.IsDir() // false for a symbolic link, whatever it points to
		if stack.ignored(p, isDir) {
			continue
		}
		switch err := visit(p, r, e); {
		case errors.Is(err, fs.SkipDir):
			continue
		case err != nil:
			return err
		}
		if isDir {
			if err := walkDir(ctx, p, r, stack, visit); err != nil {
				return err
			}
		}
	}
	return nil
}

// parentIgnores loads the .gitignore files of root's parents that apply to it: up to the
// repository's top (a folder holding .git) but not above the workspace folder holding root.
func (ws *Workspace) parentIgnores(root string) ignoreStack {
	if exists(filepath.Join(root, ".git")) {
		return nil
	}
	top := ws.rootOf(root)
	var dirs []string
	for d := filepath.Dir(root); top != "" && within(d, top) && d != root; d = filepath.Dir(d) {
		dirs = append(dirs, d)
		if d == top || exists(filepath.Join(d, ".git")) {
			break
		}
	}
	slices.Reverse(dirs)
	var stack ignoreStack
	for _, d := range dirs {
		if data, err := os.ReadFile(filepath.Join(d, ".gitignore")); err == nil {
			stack = stack.with(parseIgnore(d, data))
		}
	}
	return stack
}

// exists reports whether something is at path (a link counts, whatever it points to).
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// folder resolves path ("" meaning the cwd) to an existing folder of the workspace, or fails
// saying why; hint is added to the "not a folder" message.
func (ws *Workspace) folder(path, hint string) (string, error) {
	if path == "" {
		path = "."
	}
	real, err := ws.Resolve(path)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(real)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("path not found: %s", path)
	case err != nil:
		return "", err
	case !fi.IsDir():
		return "", fmt.Errorf("%s is not a folder%s", path, hint)
	}
	return real, nil
}
