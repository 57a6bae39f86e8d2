#!/bin/sh
# Render deploy/nginx.conf for one setup and create its temp folders (POSIX sh: also runs in the
# nginx:alpine container of deploy/compose.yaml).
#   PREFIX=/tmp/x LISTEN=127.0.0.1:8080 APP_A=127.0.0.1:8501 APP_B=127.0.0.1:8502 \
#     sh deploy/render_nginx.sh deploy/nginx.conf > /tmp/x/nginx.conf
set -eu
: "${PREFIX:?folder for pid, logs and temp files}" "${LISTEN:?address:port to listen on}"
: "${APP_A:?replica a as host:port}" "${APP_B:?replica b as host:port}"
mkdir -p "$PREFIX/client_body" "$PREFIX/proxy" "$PREFIX/fastcgi" "$PREFIX/uwsgi" "$PREFIX/scgi"
# nginx ignores `user` when started unprivileged; as root its workers must own the temp folders.
USER_LINE="# user: ignored when nginx starts unprivileged"
if [ "$(id -u)" -eq 0 ]; then USER_LINE="user $(id -un) $(id -gn);"; fi
sed -e "s|@PREFIX@|$PREFIX|g" -e "s|@LISTEN@|$LISTEN|g" -e "s|@APP_A@|$APP_A|g" \
    -e "s|@APP_B@|$APP_B|g" -e "s|@USER@|$USER_LINE|g" "$1"
