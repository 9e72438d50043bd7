"""The request families: worlds of six services, what each family plants, their variants and their oracle."""
