# Sourced by bin/goald (POSIX sh, builtins only but for one `stat`) for a `goald start`: when the start runs
# in the foreground and GOALD_HOME holds a private start-up snapshot built by this node for this goald
# (src/cli/startup-snapshot/snapshot-files.ts), Node starts from it, with the start's modules already
# loaded. Anything else returns, and bin/goald runs goald as usual: with GOALD_STARTUP_SNAPSHOT=missing
# exported when a snapshot could have been used, so that goald builds one once that start is over.
# goald_self: this install's bin/goald, its symbolic links resolved.

goald_fg=
for goald_arg do [ "$goald_arg" = --foreground ] && goald_fg=1; done
goald_bundle=${goald_self%/*/*}/dist/bundle
# GOALD_HOME as state/goald-home.ts resolves it (an empty variable is unset).
# The node the shell would exec: the first executable `node` on PATH (looked up here, not by a fork).
goald_node=
if [ -n "$goald_fg" ]; then
  goald_ifs=$IFS
  IFS=:
  set -f
  for goald_d in $PATH; do
    if [ -f "${goald_d:-.}/node" ] && [ -x "${goald_d:-.}/node" ]; then
      goald_node=${goald_d:-.}/node
      break
    fi
  done
  set +f
  IFS=$goald_ifs
fi
if [ -n "$goald_node" ]; then
  if [ -n "${GOALD_HOME-}" ]; then
    case $GOALD_HOME in /*) goald_home=$GOALD_HOME ;; *) goald_home=$PWD/$GOALD_HOME ;; esac
  elif case ${XDG_STATE_HOME-} in /*) true ;; *) false ;; esac; then
    goald_home=$XDG_STATE_HOME/goald
  elif [ -n "${HOME-}" ]; then
    goald_home=$HOME/.local/state/goald
  else
    goald_home=
  fi
else
  goald_home=
fi
if [ -n "$goald_home" ]; then
  # The directory's name: the bundle's path, each run of bytes other than letters, digits and ._- as one _.
  goald_key= goald_rest=$goald_bundle
  while [ -n "$goald_rest" ]; do
    goald_c=${goald_rest%"${goald_rest#?}"}
    goald_rest=${goald_rest#?}
    case $goald_c in
      [A-Za-z0-9._-]) goald_key=$goald_key$goald_c ;;
      *) case $goald_key in *_) ;; *) goald_key=${goald_key}_ ;; esac ;;
    esac
  done
  goald_dir=$goald_home/cache/startup/$goald_key
  goald_want=
  # Ours (the owner is the user running goald), and built for the node on PATH and this bundle.
  if [ -O "$goald_dir" ] && [ -O "$goald_dir/start.blob" ] && [ -O "$goald_dir/identity" ] \
    && { IFS= read -r goald_node_id && IFS= read -r goald_bundle_id; } <"$goald_dir/identity" 2>/dev/null; then
    goald_want="$goald_node_id
$goald_bundle_id"
  fi
  if [ -n "$goald_want" ]; then
    # One stat: the node binary and bin.js as the identity names them, and the directory and the blob as
    # private as the build left them (what runs as goald is writable by nobody else).
    goald_got=$(stat -L -c '%a:%d:%i:%s:%Y:%Z' -- "$goald_node" "$goald_bundle/bin.js" "$goald_dir" "$goald_dir/start.blob" 2>/dev/null)
    case $goald_got in
      "$goald_want
700:"*"
600:"*) exec node --snapshot-blob "$goald_dir/start.blob" "$@" ;;
    esac
  fi
  GOALD_STARTUP_SNAPSHOT=missing
  export GOALD_STARTUP_SNAPSHOT
fi
