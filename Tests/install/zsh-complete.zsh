# Prints, one a line as MATCH:WORD, what zsh's completion system offers after typing $1 (in an
# interactive zsh on a pseudo-terminal, with the folder $2 first in $fpath and compinit run):
# what a user pressing Tab would be offered, captured by wrapping compadd. InstallTests runs it.
#   zsh -f zsh-complete.zsh 'mixfx render --di' FOLDER_WITH__mixfx
zmodload zsh/zpty || exit 2
zpty z zsh -f -i
zpty -w z "PROMPT=''; fpath=(${(q)2} \$fpath); autoload -U compinit; compinit -u -D"
zpty -w z "zstyle ':completion:*' list-grouped false; zstyle ':completion:*' format ''"
zpty -w z '_capture() { compadd() { builtin compadd -O __hits "$@"; print -rl -- "MATCH:"${^__hits} >/dev/tty; builtin compadd "$@" }; _main_complete; unfunction compadd }; zle -C capture complete-word _capture; bindkey "^T" capture'
zpty -w -n z "$1"$'\x14'
# wait (up to 30 s) for the first match (the pty's echo of the typed line holds none), then take
# the rest; all of it printed at once
out="" chunk=""
for i in {1..300}; do
  if zpty -r -t z chunk; then out+=$chunk; [[ $out == *MATCH:[^\"]* ]] && break; else sleep 0.1; fi
done
sleep 1
while zpty -r -t z chunk; do out+=$chunk; done
print -r -- "$out"
zpty -d z
