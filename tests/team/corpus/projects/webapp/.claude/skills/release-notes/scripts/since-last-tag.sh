#!/bin/sh
tag=$(git describe --tags --abbrev=0 2>/dev/null || echo "")
if [ -n "$tag" ]; then git log --oneline "$tag"..HEAD; else git log --oneline; fi
