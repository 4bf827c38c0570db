#!/bin/sh
# A command backend for Airlock (see docs/backends/command.md): counts the words and lines of
# the message it reads on stdin. When the message holds no words it asks for some text with the
# line protocol, exits, and is run again with the answer (AIRLOCK_RESUMED=1).
#
# Try it without Airlock:  echo 'one two three' | examples/command/word-count.sh
set -eu
# Airlock gives the program no PATH of its own unless the config names one; be explicit.
PATH=/usr/bin:/bin
export PATH

text=$(cat)
words=$(printf '%s\n' "$text" | wc -w | tr -d ' ')

if [ "$words" -eq 0 ]; then
  echo '@airlock input-required What text should I count the words of?'
  exit 0
fi

echo '@airlock working counting'
lines=$(printf '%s\n' "$text" | wc -l | tr -d ' ')
printf 'words: %s, lines: %s\n' "$words" "$lines"
