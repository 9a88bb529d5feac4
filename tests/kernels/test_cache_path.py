"""Every folder and link on the cache folder's path is trusted (`_path`).

A cache folder of the user's own, mode 0700, is still not private when a
folder above it is another user's, or writable by others: they can put
another folder (a link to the user's `~/.ssh`) in its place. As OpenSSH's
`StrictModes`: each folder on the way is this user's or root's and not
writable by others unless sticky; each link on the way is this user's or
root's, and what it points to is checked the same way. These tests run
as root here: "another user" is `fakes.OTHER_UID`, given the folders by
`chown`, as in `test_native.py`.
"""

import os
import stat

import pytest

import fakes
from tfpartial._kernels import _native

needs_root = pytest.mark.skipif(
    os.getuid() != 0, reason="only root can give a folder or link away")


def _victim(tmp_path):
  """A folder of the user's own, mode 0700, as `~/.ssh` is."""
  victim = fakes.private(tmp_path / "dot_ssh")
  (victim / "authorized_keys").write_text("ssh-ed25519 AAAA me\n")
  return victim


def _others(path, mode=0o755):
  path.mkdir()
  path.chmod(mode)
  os.chown(path, fakes.OTHER_UID, fakes.OTHER_UID)
  return path


def _refused(failing, cache, capfd):
  library, why = _native.load(failing, cache)
  assert library is None
  assert fakes.runs(failing) == 0, "built in a folder it should refuse"
  assert capfd.readouterr().err == (
      f"tfpartial: running without the compiled kernel: {why}\n")
  return why


@needs_root
def test_a_link_in_another_users_folder_is_not_followed(
    tmp_path, failing, capfd):
  # Before: the link was followed, and the kernel's files written there.
  victim = _victim(tmp_path)
  evil = _others(tmp_path / "evil")
  link = evil / "cache"
  link.symlink_to(victim)
  os.lchown(link, fakes.OTHER_UID, fakes.OTHER_UID)
  why = _refused(failing, link, capfd)
  assert why == (
      f"the folder {evil}, on the path of the cache folder {link}, belongs "
      f"to uid {fakes.OTHER_UID}, neither this user (uid 0) nor root: its "
      f"owner could put another folder in the cache's place, so tfpartial "
      f"uses no cache there; set TFPARTIAL_CACHE to a folder of your own")
  assert sorted(os.listdir(victim)) == ["authorized_keys"]


@needs_root
def test_a_link_another_user_made_in_a_sticky_folder_is_not_followed(
    tmp_path, failing, capfd):
  victim = _victim(tmp_path)
  shared = tmp_path / "tmp"
  shared.mkdir()
  shared.chmod(0o1777)  # As /tmp: a sticky folder is fine on the path ...
  link = shared / "cache"
  link.symlink_to(victim)
  os.lchown(link, fakes.OTHER_UID, fakes.OTHER_UID)
  why = _refused(failing, link / "tfpartial", capfd)
  # ... but not a link someone else made there.
  assert why.startswith(f"the symbolic link {link}, on the path of the "
                        f"cache folder {link}/tfpartial, belongs to uid "
                        f"{fakes.OTHER_UID}, neither this user"), why
  assert sorted(os.listdir(victim)) == ["authorized_keys"]


@needs_root
@pytest.mark.parametrize("through_a_link", [False, True],
                         ids=["folder", "link_to_it"])
def test_a_private_folder_inside_another_users_is_refused(
    tmp_path, failing, capfd, through_a_link):
  evil = _others(tmp_path / "evil")
  mine = fakes.private(evil / "mine")  # This user's, 0700: not enough.
  cache = mine
  if through_a_link:  # A link of the user's own to it is checked through.
    cache = tmp_path / "cache"
    cache.symlink_to(mine)
  why = _refused(failing, cache, capfd)
  assert why.startswith(f"the folder {evil}, on the path of the cache "
                        f"folder "), why
  assert f"belongs to uid {fakes.OTHER_UID}" in why
  assert os.listdir(mine) == []


@pytest.mark.parametrize("mode", ["0777", "0775", "0757", "0770"])
def test_a_folder_others_may_write_on_the_path_is_refused(
    tmp_path, failing, capfd, mode):
  shared = tmp_path / "shared"
  shared.mkdir()
  shared.chmod(int(mode, 8))
  why = _refused(failing, shared / "cache", capfd)
  assert why == (
      f"the folder {shared}, on the path of the cache folder "
      f"{shared}/cache, has mode {mode}: group or others may write it, and "
      f"so put another folder in the cache's place, so tfpartial uses no "
      f"cache there; set TFPARTIAL_CACHE to a folder of your own")
  assert not (shared / "cache").exists()  # Not made either.


@pytest.mark.parametrize("mode", ["1777", "0755", "0700"])
def test_sticky_and_private_folders_on_the_path_are_fine(
    tmp_path, failing, mode):
  parent = tmp_path / "parent"
  parent.mkdir()
  parent.chmod(int(mode, 8))
  library, why = _native.load(failing, parent / "a" / "cache")
  assert library is None and "fatal error: no headers" in why, why
  assert fakes.runs(failing) == 1
  for made in (parent / "a", parent / "a" / "cache"):
    assert stat.S_IMODE(made.stat().st_mode) == 0o700


def test_links_of_the_users_own_are_followed_and_the_target_checked(
    tmp_path, failing):
  """`~/.cache` as a link to a scratch disk, a common set-up, works."""
  scratch = fakes.private(tmp_path / "scratch")
  home = fakes.private(tmp_path / "home")
  (home / ".cache").symlink_to(scratch)
  library, why = _native.load(failing, home / ".cache" / "tfpartial")
  assert library is None and "fatal error: no headers" in why, why
  (failed,) = (scratch / "tfpartial").glob("*.failed")
  assert why.endswith(f"(recorded in {failed}; delete it to retry)"), why


def test_a_loop_of_links_is_refused(tmp_path, failing, capfd):
  (tmp_path / "a").symlink_to(tmp_path / "b")
  (tmp_path / "b").symlink_to(tmp_path / "a")
  why = _refused(failing, tmp_path / "a" / "cache", capfd)
  assert why == (f"the path of the cache folder {tmp_path}/a/cache has "
                 f"more than 40 symbolic links; set TFPARTIAL_CACHE to a "
                 f"folder of your own")
