#ifndef TP_ENV_CHECK_H
#define TP_ENV_CHECK_H

int tp_cmd_env_check(int argc, char **argv);

#endif
